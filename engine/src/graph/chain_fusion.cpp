#include "graph/chain_fusion.hpp"

#include <algorithm>
#include <optional>

#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {

bool has_elementwise_steps(const GraphNode& n, const Graph& graph) { return family_of(n.op).pointwise(n, graph); }

std::optional<ChainOperand> append_steps(const GraphNode& node, const std::vector<ChainOperand>& operand_of,
                                         ElementwiseChain& chain) {
  return family_of(node.op).append_pointwise_steps(node, operand_of, chain);
}

namespace {

constexpr size_t kMaxChainInputs = 3;  // the elementwise kernel's

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
  // A chain reads one to three tensors (one over constants alone is left as it is).
  if (inputs.empty() || inputs.size() > kMaxChainInputs) return std::nullopt;
  if (!append_steps(consumer, of_consumer, chain)) return std::nullopt;
  return std::make_pair(std::move(chain), std::move(inputs));
}

}  // namespace

Graph fuse_chains(Device& device, const Graph& graph) {
  bool has_f64 = device.has(kCapFloat64);
  return fuse_sole_reader_pairs(device, graph, [has_f64](const Graph& g, uint32_t p, uint32_t c) -> std::optional<FusedNode> {
    const GraphNode& producer = g.nodes()[p];
    const GraphNode& consumer = g.nodes()[c];
    if (!has_elementwise_steps(producer, g) || !has_elementwise_steps(consumer, g)) return std::nullopt;
    // A producer of another shape is computed per element of the consumer's: only one that
    // reads no tensor (a constant) gives the same values that way.
    if (consumer.out.shape != producer.out.shape && !producer.inputs.empty()) return std::nullopt;
    auto chain = joined(producer, uint32_t(g.input_count()) + p, consumer);
    if (!chain) return std::nullopt;
    // A chain that would run step by step (chain_rounding: float math beside f64 code) is left
    // as two nodes, so that the chains on either side of the split still fuse.
    std::vector<DType> types;
    for (uint32_t v : chain->second) types.push_back(g.value(v).type);
    if (chain_rounding(chain->first, types, has_f64).reason != ChainSplit::None) return std::nullopt;
    return FusedNode{OpId::elementwise_chain, std::move(chain->second), Attrs::of(std::move(chain->first))};
  });
}

}  // namespace nxv
