#include "graph/chain_fusion.hpp"

#include <algorithm>
#include <optional>

#include "graph/prologue_fusion.hpp"
#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {

bool has_elementwise_steps(const GraphNode& n, const Graph& graph) { return family_of(n.op).pointwise(n, graph); }

std::optional<ChainOperand> append_steps(const GraphNode& node, const std::vector<ChainOperand>& operand_of,
                                         ElementwiseChain& chain) {
  return family_of(node.op).append_pointwise_steps(node, operand_of, chain);
}

namespace {

// Tensors a chain reads at most (over three, the elementwise family's check also asks each to be
// dense like the output or a single element).
constexpr size_t kMaxChainInputs = 8;
// Steps one generated chain holds at most (its kernel's compile time grows with them), and
// steps a shared producer may add to its readers' kernels in all (fuse_shared_chains).
constexpr size_t kMaxChainSteps = 32;
constexpr size_t kMaxRecomputedSteps = 8;

// The producer's and then the consumer's steps, over the tensors both read (the product
// excepted); nullopt when they are more than the kernel takes.
std::optional<std::pair<ElementwiseChain, std::vector<uint32_t>>> joined(const GraphNode& producer, uint32_t product,
                                                                         const GraphNode& consumer) {
  std::vector<uint32_t> inputs;
  auto operand = [&](uint32_t v) {
    auto it = std::find(inputs.begin(), inputs.end(), v);
    if (it == inputs.end()) it = inputs.insert(inputs.end(), v);
    return ChainOperand{ChainOperand::From::Input, uint32_t(it - inputs.begin())};
  };
  ElementwiseChain chain;
  std::vector<ChainOperand> of_producer, of_consumer;
  for (uint32_t v : producer.inputs) of_producer.push_back(operand(v));
  auto result = append_steps(producer, of_producer, chain);
  if (!result) return std::nullopt;
  for (uint32_t v : consumer.inputs) of_consumer.push_back(v == product ? *result : operand(v));
  // A chain reads one to eight tensors (one over constants alone is left as it is).
  if (inputs.empty() || inputs.size() > kMaxChainInputs) return std::nullopt;
  if (!append_steps(consumer, of_consumer, chain)) return std::nullopt;
  return std::make_pair(std::move(chain), std::move(inputs));
}

// The consumer's chain with the producer's steps first, where both are elementwise and the
// result runs as one kernel with the bits of its steps.
std::optional<FusedNode> fused_pair(const Graph& g, uint32_t p, uint32_t c, bool has_f64) {
  const GraphNode& producer = g.nodes()[p];
  const GraphNode& consumer = g.nodes()[c];
  if (!has_elementwise_steps(producer, g) || !has_elementwise_steps(consumer, g)) return std::nullopt;
  // A producer of another shape is computed per element of the consumer's: only one that
  // reads no tensor (a constant) gives the same values that way.
  if (consumer.out.shape != producer.out.shape && !producer.inputs.empty()) return std::nullopt;
  auto chain = joined(producer, uint32_t(g.input_count()) + p, consumer);
  if (!chain || chain->first.steps.size() > kMaxChainSteps) return std::nullopt;
  // A chain that would run step by step (chain_rounding: float math beside f64 code) is left
  // as two nodes, so that the chains on either side of the split still fuse.
  std::vector<DType> types;
  for (uint32_t v : chain->second) types.push_back(g.value(v).type);
  if (chain_rounding(chain->first, types, has_f64).reason != ChainSplit::None) return std::nullopt;
  return FusedNode{OpId::elementwise_chain, std::move(chain->second), Attrs::of(std::move(chain->first))};
}

size_t step_count(const GraphNode& node) {
  ElementwiseChain chain;
  std::vector<ChainOperand> operands;
  for (uint32_t i = 0; i < node.inputs.size(); ++i) operands.push_back({ChainOperand::From::Input, i});
  return append_steps(node, operands, chain) ? chain.steps.size() : SIZE_MAX;
}

}  // namespace

Graph fuse_chains(Device& device, const Graph& graph) {
  bool has_f64 = device.has(kCapFloat64);
  return fuse_sole_reader_pairs(device, graph, [has_f64](const Graph& g, uint32_t p, uint32_t c) {
    return fused_pair(g, p, c, has_f64);
  });
}

Graph fuse_shared_chains(Device& device, const Graph& graph) {
  bool has_f64 = device.has(kCapFloat64);
  return until_no_fewer_nodes(graph, [&](const Graph& g) {
    const auto& nodes = g.nodes();
    const uint32_t first_node = uint32_t(g.input_count());
    std::vector<std::vector<uint32_t>> readers(g.value_count());
    for (uint32_t n = 0; n < nodes.size(); ++n)
      for (uint32_t v : nodes[n].inputs)
        if (readers[v].empty() || readers[v].back() != n) readers[v].push_back(n);
    std::vector<bool> output(g.value_count(), false);
    for (uint32_t v : g.outputs()) output[v] = true;
    std::vector<std::optional<FusedNode>> fused(nodes.size());
    std::vector<bool> dropped(nodes.size(), false), taken(nodes.size(), false);
    for (uint32_t p = 0; p < nodes.size(); ++p) {
      const auto& rs = readers[first_node + p];
      if (rs.size() < 2 || output[first_node + p] || taken[p]) continue;
      // Each reader computes the producer's steps again: only a few steps a few times over.
      if (step_count(nodes[p]) * (rs.size() - 1) > kMaxRecomputedSteps) continue;
      std::vector<FusedNode> replacements;
      for (uint32_t c : rs) {
        if (taken[c]) break;
        auto node = fused_pair(g, p, c, has_f64);
        if (!node) node = with_producer_as_prologue(g, p, c);  // a reduction reading it
        if (!node) node = with_producer_as_operand_prologue(g, p, c);  // a product reading it
        if (!node || !checks(device, g, *node, nodes[c].out)) break;
        replacements.push_back(std::move(*node));
      }
      if (replacements.size() != rs.size()) continue;
      for (size_t i = 0; i < rs.size(); ++i) {
        fused[rs[i]] = std::move(replacements[i]);
        taken[rs[i]] = true;
      }
      dropped[p] = taken[p] = true;
    }
    return rewritten(g, fused, dropped);
  });
}


}  // namespace nxv
