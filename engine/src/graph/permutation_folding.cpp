#include "graph/permutation_folding.hpp"

#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {

Graph fold_permutations(Device& device, const Graph& graph) {
  return fuse_sole_reader_pairs(device, graph, [&](const Graph& g, uint32_t p, uint32_t c) -> std::optional<FusedNode> {
    const GraphNode& permute = g.nodes()[c];
    auto perm = family_of(permute.op).permutation(permute);
    if (!perm || permute.inputs.size() != 1) return std::nullopt;
    const GraphNode& producer = g.nodes()[p];
    auto replacement = family_of(producer.op).with_permuted_result(device, producer, g, *perm);
    if (!replacement) return std::nullopt;
    return FusedNode{replacement->op, std::move(replacement->inputs), std::move(replacement->attrs)};
  });
}

}  // namespace nxv
