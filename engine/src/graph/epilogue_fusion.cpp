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
// the epilogue would read more tensors than the producer's family takes.
std::optional<std::pair<ElementwiseChain, std::vector<uint32_t>>> extended_epilogue(const GraphNode& producer,
                                                                                    uint32_t product,
                                                                                    const GraphNode& node,
                                                                                    const Graph& graph) {
  if (!has_elementwise_steps(node, graph)) return std::nullopt;
  const Family& family = family_of(producer.op);
  ElementwiseChain chain = family.epilogue(producer).value_or(ElementwiseChain{});
  std::vector<uint32_t> extras(producer.inputs.begin() + ptrdiff_t(family.own_inputs(producer)), producer.inputs.end());
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
  if (extras.size() > family.epilogue_tensors(producer)) return std::nullopt;
  if (!append_steps(node, operand_of, chain)) return std::nullopt;
  return std::make_pair(std::move(chain), std::move(extras));
}

}  // namespace

Graph fuse_epilogues(Device& device, const Graph& graph) {
  // A producer takes a chain of consumers one node a round.
  return fuse_sole_reader_pairs(device, graph, [](const Graph& g, uint32_t p, uint32_t c) -> std::optional<FusedNode> {
    const GraphNode& producer = g.nodes()[p];
    const GraphNode& consumer = g.nodes()[c];
    const Family& family = family_of(producer.op);
    if (!family.takes_epilogue(producer) || consumer.out.shape != producer.out.shape) return std::nullopt;
    auto epilogue = extended_epilogue(producer, uint32_t(g.input_count()) + p, consumer, g);
    if (!epilogue) return std::nullopt;
    std::vector<uint32_t> inputs(producer.inputs.begin(), producer.inputs.begin() + ptrdiff_t(family.own_inputs(producer)));
    inputs.insert(inputs.end(), epilogue->second.begin(), epilogue->second.end());
    return FusedNode{producer.op, std::move(inputs), family.with_epilogue(producer, std::move(epilogue->first))};
  });
}

}  // namespace nxv
