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

std::optional<FusedNode> with_producer_as_operand_prologue(const Graph& g, uint32_t p, uint32_t c) {
  const GraphNode& producer = g.nodes()[p];
  const GraphNode& consumer = g.nodes()[c];
  const Family& family = family_of(consumer.op);
  const uint32_t product = uint32_t(g.input_count()) + p;
  if (producer.inputs.empty() || !has_elementwise_steps(producer, g)) return std::nullopt;
  // One tensor whose every value gives the result's value at the same place.
  const uint32_t v = producer.inputs[0];
  if (std::any_of(producer.inputs.begin(), producer.inputs.end(), [&](uint32_t x) { return x != v; }) ||
      g.value(v).type != producer.out.type || g.value(v).shape != producer.out.shape)
    return std::nullopt;
  ElementwiseChain chain;
  std::vector<ChainOperand> operand_of(producer.inputs.size(), ChainOperand{ChainOperand::From::Input, 0});
  auto result = append_steps(producer, operand_of, chain);
  if (!result || chain.steps.empty() || result->from != ChainOperand::From::Step ||
      result->index + 1 != chain.steps.size())
    return std::nullopt;
  FusedNode fused{consumer.op, consumer.inputs, consumer.attrs};
  bool taken = false;
  for (size_t i = 0; i < consumer.inputs.size(); ++i) {
    if (consumer.inputs[i] != product) continue;
    GraphNode now{consumer.op, consumer.out, fused.inputs, fused.attrs};
    // Read as an epilogue's tensor, or an operand that takes none: not fused.
    if (i >= family.own_inputs(consumer) || !family.takes_operand_prologue(now, i)) return std::nullopt;
    fused.attrs = family.with_operand_prologue(now, i, chain);
    fused.inputs[i] = v;
    taken = true;
  }
  if (!taken) return std::nullopt;
  return fused;
}

Graph fuse_operand_prologues(Device& device, const Graph& graph) {
  return fuse_sole_reader_pairs(device, graph, with_producer_as_operand_prologue);
}

Graph fuse_prologues(Device& device, const Graph& graph) {
  return fuse_sole_reader_pairs(device, graph, with_producer_as_prologue);
}

}  // namespace nxv
