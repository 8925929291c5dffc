// Fused elementwise chains: each step becomes a GLSL function of its loaded operands whose
// body is the step's own scalar expression (with its compute type as C); a chain function
// calls them in order, storing each intermediate in its Nx type and loading it as the next
// step loads an input of that type.
#include "ops/elementwise/fusion.hpp"

#include <algorithm>
#include <set>

namespace nxv {
namespace {

DType operand_type(const ElementwiseChain& chain, const std::vector<DType>& in, const ChainOperand& o) {
  return o.from == ChainOperand::From::Input ? in[o.index] : chain.steps[o.index].out;
}

int step_arity(OpId op) {
  if (op == OpId::as_type) return 1;
  const EwDef* def = elementwise_def(op);
  return def ? def->arity : -1;
}

}  // namespace

std::string chain_typing_error(const ElementwiseChain& chain, DType out, const std::vector<DType>& in, bool& invalid) {
  invalid = true;
  if (chain.steps.empty()) return "elementwise_chain: a chain needs at least one step";
  if (in.empty() || in.size() > 3) return "elementwise_chain: a chain takes one to three inputs";
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::string where = "elementwise_chain step " + std::to_string(s) + " (" + std::string(op_info(step.op).name) + ")";
    if (op_info(step.op).family != FamilyId::elementwise || step.op == OpId::elementwise_chain)
      return where + ": not an elementwise op";
    if (step.op == OpId::bitcast) return where + ": bitcast is a view and has no scalar expression";
    if (int(step.operands.size()) != step_arity(step.op))
      return where + ": takes " + std::to_string(step_arity(step.op)) + " operands, given " +
             std::to_string(step.operands.size());
    std::vector<DType> types;
    for (const auto& o : step.operands) {
      bool input = o.from == ChainOperand::From::Input;
      if ((input && o.index >= in.size()) || (!input && o.index >= s))
        return where + ": an operand names " + (input ? "an input the op does not have" : "a step not before it");
      types.push_back(operand_type(chain, in, o));
    }
    std::string why = elementwise_typing_error(step.op, step.out, types, invalid);
    if (!why.empty()) return where + ": " + why;
  }
  invalid = true;
  if (chain.steps.back().out != out) return "elementwise_chain: the last step's type is not the output's";
  invalid = false;
  return "";
}

ScalarExpr chain_scalar_expr(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             std::string& generated) {
  ScalarExpr result;
  std::set<std::pair<std::string, std::string>> defines;
  std::string g = "// elementwise chain (ops/elementwise/fusion.cpp)\n";
  std::vector<std::string> computes;
  std::string body;
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::vector<DType> types;
    for (const auto& o : step.operands) types.push_back(operand_type(chain, in, o));
    ScalarExpr e = scalar_expr(step.op, step.out, types, has_f64);
    result.features.merge(e.features);
    result.features.add_type(step.out);
    defines.insert(e.defines.begin(), e.defines.end());
    if (e.max_workgroups && (!result.max_workgroups || e.max_workgroups < result.max_workgroups))
      result.max_workgroups = e.max_workgroups;
    std::string n = std::to_string(s);
    const char* params[] = {"a", "b", "c"};
    g += "#undef C\n#define C " + e.compute + "\n" + e.compute + " nxv_chain_step" + n + "(";
    std::string call = "  " + e.compute + " t" + n + " = nxv_chain_step" + n + "(";
    for (size_t k = 0; k < types.size(); ++k) {
      std::string sep = k ? ", " : "";
      g += sep + e.load_types[k] + " " + params[k];
      std::string load = "NXV_CHAIN_LOAD" + n + "_" + std::to_string(k);
      const ChainOperand& o = step.operands[k];
      std::string arg = o.from == ChainOperand::From::Input
                            ? "in" + std::to_string(o.index)
                            : "NXV_CHAIN_STORE" + std::to_string(o.index) + "(t" + std::to_string(o.index) + ")";
      body += "#define " + load + "(x) " + glsl_load(types[k], e.load_types[k]) + "\n";
      call += sep + load + "(" + arg + ")";
    }
    // precise, as the template's results are: the expression's own arithmetic is never
    // contracted into its consumer's (a multiply and the next step's add into one fma), so
    // the chain rounds where the ops one by one do.
    g += ") {\n  precise C r = " + e.expr + ";\n  return r;\n}\n";
    g += "#define NXV_CHAIN_STORE" + n + "(v) " + glsl_store(step.out) + "\n";
    body += call + ");\n";
    computes.push_back(e.compute);
  }
  result.compute = computes.back();
  g += "#undef C\n#define C " + result.compute + "\n" + result.compute + " nxv_chain(";
  std::string args;
  for (size_t i = 0; i < in.size(); ++i) {
    g += (i ? ", " : "") + glsl_scalar_register_type(in[i]) + " in" + std::to_string(i);
    args += (i ? ", " : "") + std::string(1, "abc"[i]);
  }
  g += ") {\n" + body + "  return t" + std::to_string(chain.steps.size() - 1) + ";\n}\n";
  for (DType t : in) result.features.add_type(t);
  result.defines.assign(defines.begin(), defines.end());
  result.defines.emplace_back("NXV_GENERATED", "1");
  result.expr = "nxv_chain(" + args + ")";
  generated = std::move(g);
  return result;
}

}  // namespace nxv
