#include "graph/prologue_fusion.hpp"

#include <algorithm>

#include "graph/chain_fusion.hpp"
#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {
namespace {

constexpr size_t kMaxPrologueInputs = 3;

}  // namespace

std::optional<FusedNode> with_producer_as_prologue(const Graph& g, uint32_t p, uint32_t c) {
  const GraphNode& producer = g.nodes()[p];
  const GraphNode& consumer = g.nodes()[c];
  const Family& family = family_of(consumer.op);
  const uint32_t product = uint32_t(g.input_count()) + p;
  if (!family.takes_prologue(consumer) || family.own_inputs(consumer) != 1 || consumer.inputs.empty() ||
      consumer.inputs[0] != product || producer.inputs.empty() || !has_elementwise_steps(producer, g))
    return std::nullopt;
  std::vector<uint32_t> inputs;
  std::vector<ChainOperand> operand_of;
  for (uint32_t v : producer.inputs) {
    auto it = std::find(inputs.begin(), inputs.end(), v);
    if (it == inputs.end()) it = inputs.insert(inputs.end(), v);
    operand_of.push_back({ChainOperand::From::Input, uint32_t(it - inputs.begin())});
  }
  if (inputs.size() > kMaxPrologueInputs) return std::nullopt;
  ElementwiseChain chain;
  auto result = append_steps(producer, operand_of, chain);
  // The chain's last step must be the producer's result (a view has no steps).
  if (!result || chain.steps.empty() || result->from != ChainOperand::From::Step ||
      result->index + 1 != chain.steps.size())
    return std::nullopt;
  std::vector<uint32_t> fused_inputs = inputs;
  fused_inputs.insert(fused_inputs.end(), consumer.inputs.begin() + 1, consumer.inputs.end());
  return FusedNode{consumer.op, std::move(fused_inputs),
                   family.with_prologue(consumer, std::move(chain), uint32_t(inputs.size()), producer.out.shape)};
}

Graph fuse_prologues(Device& device, const Graph& graph) {
  return fuse_sole_reader_pairs(device, graph, with_producer_as_prologue);
}

}  // namespace nxv
