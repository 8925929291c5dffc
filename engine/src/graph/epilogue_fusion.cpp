#include "graph/epilogue_fusion.hpp"

#include <algorithm>
#include <optional>

#include "graph/chain_fusion.hpp"
#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {
namespace {

// The producer's epilogue extended by the consumer's work (the chain over the product and the
// producer's other tensors, then the consumer's steps over its result and the consumer's other
// inputs), and the epilogue's tensors; nullopt where the consumer is no elementwise kernel or
// the epilogue would read more than two tensors.
std::optional<std::pair<ElementwiseChain, std::vector<uint32_t>>> extended_epilogue(const GraphNode& producer,
                                                                                    uint32_t product,
                                                                                    const GraphNode& node,
                                                                                    const Graph& graph) {
  if (!has_elementwise_steps(node, graph)) return std::nullopt;
  ElementwiseChain chain = family_of(producer.op).epilogue(producer).value_or(ElementwiseChain{});
  std::vector<uint32_t> extras(producer.inputs.begin() + 2, producer.inputs.end());
  // What the consumer's result operand becomes: the product, or the epilogue's last step.
  ChainOperand result{ChainOperand::From::Input, 0};
  if (!chain.steps.empty()) result = {ChainOperand::From::Step, uint32_t(chain.steps.size() - 1)};
  std::vector<ChainOperand> operand_of;  // for each of the consumer's inputs
  for (uint32_t v : node.inputs) {
    if (v == product) {
      operand_of.push_back(result);
      continue;
    }
    auto it = std::find(extras.begin(), extras.end(), v);
    if (it == extras.end()) {
      extras.push_back(v);
      it = extras.end() - 1;
    }
    operand_of.push_back({ChainOperand::From::Input, uint32_t(it - extras.begin()) + 1});
  }
  if (extras.size() > 2) return std::nullopt;
  if (!append_steps(node, operand_of, chain)) return std::nullopt;
  return std::make_pair(std::move(chain), std::move(extras));
}

// One round: each node that takes an epilogue (its family's role) whose result one fusible node alone reads takes that node's work.
Graph fuse_once(Device& device, const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  std::vector<uint32_t> reader = sole_readers(graph);
  // Node c replaced by the fused producer; dropped: the producers.
  std::vector<std::optional<FusedNode>> fused(nodes.size());
  std::vector<bool> dropped(nodes.size(), false);
  for (uint32_t d = 0; d < nodes.size(); ++d) {
    const GraphNode& producer = nodes[d];
    const Family& family = family_of(producer.op);
    if (!family.takes_epilogue(producer) || fused[d]) continue;
    uint32_t c = reader[first_node + d];
    if (c >= kManyReaders || fused[c] || dropped[c]) continue;
    const GraphNode& consumer = nodes[c];
    if (consumer.out.shape != producer.out.shape) continue;
    auto epilogue = extended_epilogue(producer, first_node + d, consumer, graph);
    if (!epilogue) continue;
    Attrs a = family.with_epilogue(producer, std::move(epilogue->first));
    std::vector<uint32_t> inputs(producer.inputs.begin(), producer.inputs.begin() + 2);
    inputs.insert(inputs.end(), epilogue->second.begin(), epilogue->second.end());
    FusedNode node{producer.op, std::move(inputs), std::move(a)};
    if (!checks(device, graph, node, consumer.out)) continue;
    fused[c] = std::move(node);
    dropped[d] = true;
  }
  return rewritten(graph, fused, dropped);
}

}  // namespace

Graph fuse_epilogues(Device& device, const Graph& graph) {
  // Rounds until none fuses: a producer takes a chain of consumers one node a round.
  return until_no_fewer_nodes(graph, [&](const Graph& g) { return fuse_once(device, g); });
}

}  // namespace nxv
