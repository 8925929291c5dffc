#include "graph/chain_fusion.hpp"

#include <algorithm>
#include <optional>

#include "graph/rewrite.hpp"

namespace nxv {

bool has_elementwise_steps(const GraphNode& n, const Graph& graph) {
  if (op_info(n.op).family != FamilyId::elementwise || n.op == OpId::bitcast) return false;
  if (n.op == OpId::elementwise_chain) return !n.attrs.empty();
  if (n.op == OpId::as_type && graph.value(n.inputs[0]).type == n.out.type) return false;
  return true;
}

bool append_steps(const GraphNode& node, const std::vector<ChainOperand>& operand_of, ElementwiseChain& chain) {
  uint32_t shift = uint32_t(chain.steps.size());
  if (node.op != OpId::elementwise_chain) {
    chain.steps.push_back({node.op, node.out.type, operand_of});
    return true;
  }
  for (ChainStep step : node.attrs.as<ElementwiseChain>().steps) {
    for (auto& o : step.operands) {
      if (o.from == ChainOperand::From::Step) o.index += shift;
      else if (o.index < operand_of.size()) o = operand_of[o.index];
      else return false;
    }
    chain.steps.push_back(std::move(step));
  }
  return true;
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
  if (!append_steps(producer, of_producer, chain)) return std::nullopt;
  ChainOperand result{ChainOperand::From::Step, uint32_t(chain.steps.size() - 1)};
  for (uint32_t v : consumer.inputs) of_consumer.push_back(v == product ? result : operand(v));
  if (inputs.size() > kMaxChainInputs) return std::nullopt;
  if (!append_steps(consumer, of_consumer, chain)) return std::nullopt;
  return std::make_pair(std::move(chain), std::move(inputs));
}

Graph fuse_once(Device& device, const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  std::vector<uint32_t> reader = sole_readers(graph);
  // Node c replaced by the chain; dropped: the producers.
  std::vector<std::optional<FusedNode>> fused(nodes.size());
  std::vector<bool> dropped(nodes.size(), false);
  for (uint32_t p = 0; p < nodes.size(); ++p) {
    const GraphNode& producer = nodes[p];
    if (fused[p] || !has_elementwise_steps(producer, graph)) continue;
    uint32_t c = reader[first_node + p];
    if (c >= kManyReaders || fused[c] || dropped[c]) continue;
    const GraphNode& consumer = nodes[c];
    if (consumer.out.shape != producer.out.shape || !has_elementwise_steps(consumer, graph)) continue;
    auto chain = joined(producer, first_node + p, consumer);
    if (!chain) continue;
    Attrs a = Attrs::of(std::move(chain->first));
    std::vector<TensorSpec> specs;
    for (uint32_t v : chain->second) specs.push_back(contiguous_spec(graph.value(v).type, graph.value(v).shape));
    if (!check_op(device, OpId::elementwise_chain, consumer.out, specs, a)) continue;
    fused[c] = FusedNode{OpId::elementwise_chain, std::move(chain->second), std::move(a)};
    dropped[p] = true;
  }
  return rewritten(graph, fused, dropped);
}

}  // namespace

Graph fuse_chains(Device& device, const Graph& graph) {
  return until_no_fewer_nodes(graph, [&](const Graph& g) { return fuse_once(device, g); });
}

}  // namespace nxv
