// What the loop kernel's code takes of a body's nodes (ops/loop/loop_code.hpp generates the
// code; ops/region/ forms regions by the same rules): the types and reductions it computes, a
// pointwise node as elementwise steps, and which float controls those steps need.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "nxv/error.hpp"
#include "ops/elementwise/fusion.hpp"
#include "ops/elementwise/scalar_exprs.hpp"
#include "ops/family.hpp"

namespace nxv::loop {

[[noreturn]] inline void refuse(const std::string& why) { throw Error(ErrorKind::Unsupported, "loop kernel: " + why); }

inline bool is_reduction(OpId op) {
  return op == OpId::sum || op == OpId::product || op == OpId::reduce_max || op == OpId::reduce_min ||
         op == OpId::all || op == OpId::any;
}

inline bool supported_type(DType t) { return !is_complex(t) && (!is_float(t) || t == DType::F32 || t == DType::F64); }

// A pointwise node as elementwise steps over its inputs (an elementwise_chain's own), the last
// step its value; or the reason it has none.
inline std::optional<ElementwiseChain> pointwise_steps(const GraphNode& node, std::string& why) {
  if (node.op == OpId::elementwise_chain) return node.attrs.as<ElementwiseChain>();
  ElementwiseChain chain;
  std::vector<ChainOperand> operands;
  for (uint32_t k = 0; k < node.inputs.size(); ++k) operands.push_back({ChainOperand::From::Input, k});
  auto result = family_of(node.op).append_pointwise_steps(node, operands, chain);
  if (!result) return why = std::string(op_info(node.op).name) + " as elementwise steps", std::nullopt;
  if (result->from != ChainOperand::From::Step || result->index + 1 != chain.steps.size())
    return why = std::string(op_info(node.op).name) + " computes nothing an elementwise step would", std::nullopt;
  return chain;
}

// The names of a chain's steps that compute float math of several roundings without f64 (over
// inputs of types `in`), and whether any step uses f64: one kernel cannot give both their own
// kernels' float controls (chain_rounding's rule).
struct StepFloatControls {
  bool uses_f64 = false;
  std::vector<std::string> float_steps;
};
inline StepFloatControls step_float_controls(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64) {
  StepFloatControls c;
  for (const ChainStep& step : chain.steps) {
    std::vector<DType> types;
    for (const auto& o : step.operands) types.push_back(chain_operand_type(chain, in, o));
    ScalarExpr e = scalar_expr(step.op, step.out, types, has_f64);
    if (uses_f64(e)) c.uses_f64 = true;
    else if (several_float_roundings(step.op, e)) c.float_steps.push_back(std::string(op_info(step.op).name));
  }
  return c;
}

}  // namespace nxv::loop
