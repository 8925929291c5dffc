#include "graph/permutation_folding.hpp"

#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {
namespace {

Graph fold_once(Device& device, const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  std::vector<uint32_t> reader = sole_readers(graph);
  std::vector<std::optional<FusedNode>> fused(nodes.size());
  std::vector<bool> dropped(nodes.size(), false);
  for (uint32_t c = 0; c < nodes.size(); ++c) {
    const GraphNode& permute = nodes[c];
    auto perm = family_of(permute.op).permutation(permute);
    if (!perm || permute.inputs.size() != 1 || permute.inputs[0] < first_node) continue;
    uint32_t p = permute.inputs[0] - first_node;
    if (reader[permute.inputs[0]] != c || fused[p] || dropped[p]) continue;
    const GraphNode& producer = nodes[p];
    auto replacement = family_of(producer.op).with_permuted_result(device, producer, graph, *perm);
    if (!replacement) continue;
    FusedNode node{replacement->op, std::move(replacement->inputs), std::move(replacement->attrs)};
    if (!checks(device, graph, node, permute.out)) continue;
    fused[c] = std::move(node);
    dropped[p] = true;
  }
  return rewritten(graph, fused, dropped);
}

}  // namespace

Graph fold_permutations(Device& device, const Graph& graph) {
  return until_no_fewer_nodes(graph, [&](const Graph& g) { return fold_once(device, g); });
}

}  // namespace nxv
