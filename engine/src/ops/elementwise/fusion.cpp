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

// The type whose storage is `t`'s compute type (float for f16, bf16 and f8; 32-bit for
// narrow integers): an intermediate of type t is kept in that form between steps.
DType widened(DType t) {
  switch (t) {
    case DType::F8: case DType::F8E4M3FN: case DType::F16: case DType::BF16: return DType::F32;
    case DType::U8: case DType::U16: return DType::U32;
    case DType::S8: case DType::S16: return DType::S32;
    default: return t;
  }
}

// `value` (a GLSL expression of t's storage type) with its bits exclusive-ored with `zero`.
std::string opaque(DType t, const std::string& value) {
  std::string x = "(" + value + ")";
  switch (t) {
    case DType::F32: return "uintBitsToFloat(floatBitsToUint" + x + " ^ zero)";
    case DType::C64: return "uintBitsToFloat(floatBitsToUint" + x + " ^ uvec2(zero))";
    case DType::F64: return "packDouble2x32(unpackDouble2x32" + x + " ^ uvec2(zero))";
    case DType::C128:  // .s and .t: the macro this goes into names its parameter x
      return "dvec2(packDouble2x32(unpackDouble2x32(" + x + ".s) ^ uvec2(zero)), packDouble2x32(unpackDouble2x32(" + x +
             ".t) ^ uvec2(zero)))";
    default: return "(" + x + " ^ " + glsl_storage_type(t) + "(zero))";
  }
}

int step_arity(OpId op) {
  if (op == OpId::as_type) return 1;
  const EwDef* def = elementwise_def(op);
  return def ? def->arity : -1;
}

// as_type into the operand's own type: a view when the op runs alone.
bool is_identity_cast(const ChainStep& step, const std::vector<DType>& operand_types) {
  return step.op == OpId::as_type && operand_types.size() == 1 && operand_types[0] == step.out;
}

}  // namespace

std::string chain_typing_error(const ElementwiseChain& chain, DType out, const std::vector<DType>& in, bool& invalid,
                               size_t max_inputs) {
  invalid = true;
  if (chain.steps.empty()) return "elementwise_chain: a chain needs at least one step";
  if (in.empty() || in.size() > max_inputs)
    return "elementwise_chain: a chain takes one to " + std::to_string(max_inputs) + " inputs";
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

std::string chain_f64_required_error(const ElementwiseChain& chain, const std::vector<DType>& in) {
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::vector<DType> types;
    for (const auto& o : step.operands) types.push_back(operand_type(chain, in, o));
    if (std::string why = f64_required_error(step.op, step.out, types); !why.empty())
      return "elementwise_chain step " + std::to_string(s) + ": " + why;
  }
  return "";
}

bool several_float_roundings(OpId op, const ScalarExpr& e) {
  using enum OpId;
  auto uses = [&](const char* type) {
    return e.compute == type || std::find(e.load_types.begin(), e.load_types.end(), type) != e.load_types.end();
  };
  bool in_float = uses("float"), in_vec2 = uses("vec2");
  if (!in_float && !in_vec2) return false;
  // Exact, or one IEEE operation, on float and vec2 alike (conversions included).
  static const OpId exact[] = {as_type, add, subtract, negate, select, conjugate, real, imag, equal, not_equal,
                               greater, less, greater_equal, less_equal, logical_and, logical_or, logical_xor,
                               logical_not, is_nan, is_infinity};
  // The same on float only (complex products and magnitudes take several).
  static const OpId exact_real[] = {multiply, abs, phase, max, min, clip, ceil, floor, round, sign, remainder, sqrt};
  if (std::find(std::begin(exact), std::end(exact), op) != std::end(exact)) return false;
  return in_vec2 || std::find(std::begin(exact_real), std::end(exact_real), op) == std::end(exact_real);
}

bool uses_f64(const ScalarExpr& e) {
  Defines d;
  e.features.add_defines(d);
  return std::find(d.begin(), d.end(), std::pair<std::string, std::string>("NXV_F64", "1")) != d.end();
}

ChainRounding chain_rounding(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             FeatureSet* features) {
  bool kernel_f64 = std::any_of(in.begin(), in.end(), [](DType t) { return t == DType::F64 || t == DType::C128; });
  std::vector<size_t> sensitive;
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::vector<DType> types;
    for (const auto& o : step.operands) types.push_back(operand_type(chain, in, o));
    ScalarExpr e = scalar_expr(step.op, step.out, types, has_f64);
    if (features) features->merge(e.features), features->add_type(step.out);
    bool own_f64 = uses_f64(e);
    kernel_f64 = kernel_f64 || own_f64;
    if (!own_f64 && several_float_roundings(step.op, e)) sensitive.push_back(s);
  }
  if (features)
    for (DType t : in) features->add_type(t);
  ChainRounding r;
  if (kernel_f64 && !sensitive.empty()) {
    r.reason = ChainSplit::FloatMathUnderF64Controls;
    r.step = sensitive[0];
    r.message = "elementwise_chain step " + std::to_string(r.step) + " (" +
                std::string(op_info(chain.steps[r.step].op).name) +
                ") computes in float without f64, but the chain's kernel uses f64, whose float controls may change "
                "how the driver compiles float arithmetic";
  }
  return r;
}

ScalarExpr chain_scalar_expr(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             std::string& generated) {
  ScalarExpr result;
  std::set<std::pair<std::string, std::string>> defines;
  // `zero`: 0, from a value the compiler cannot see; a kernel whose grid has several rows
  // defines NXV_CHAIN_ZERO itself (a matmul's epilogue: ops/dot/dot_epilogue.cpp).
  std::string g = "// elementwise chain (ops/elementwise/fusion.cpp)\n#ifndef NXV_CHAIN_ZERO\n"
                  "#define NXV_CHAIN_ZERO (gl_NumWorkGroups.y - 1u)\n#endif\n", body;
  const size_t last = chain.steps.size() - 1;
  std::vector<std::string> computes(chain.steps.size());
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::vector<DType> types;
    for (const auto& o : step.operands) types.push_back(operand_type(chain, in, o));
    const std::string n = std::to_string(s);
    if (is_identity_cast(step, types) && step.operands[0].from == ChainOperand::From::Step) {
      // as_type into its operand's type is a view when run alone: the earlier step's value and
      // bits pass through unrounded (a store of a loaded f8 is not the identity).
      const std::string j = std::to_string(step.operands[0].index);
      computes[s] = computes[step.operands[0].index];
      body += "  " + computes[s] + " t" + n + " = t" + j + ";\n";
      if (s == last) {
        result.compute = computes[s];
        break;
      }
      body += "  precise " + glsl_storage_type(widened(step.out)) + " kept" + n + " = kept" + j + ";\n";
      continue;
    }
    ScalarExpr e = scalar_expr(step.op, step.out, types, has_f64);
    computes[s] = e.compute;
    result.features.merge(e.features);
    result.features.add_type(step.out);
    defines.insert(e.defines.begin(), e.defines.end());
    if (e.max_workgroups && (!result.max_workgroups || e.max_workgroups < result.max_workgroups))
      result.max_workgroups = e.max_workgroups;
    const char* params[] = {"a", "b", "c"};
    std::string signature, call;
    for (size_t k = 0; k < types.size(); ++k) {
      const ChainOperand& o = step.operands[k];
      bool input = o.from == ChainOperand::From::Input;
      std::string macro = "NXV_CHAIN_LOAD" + n + "_" + std::to_string(k);
      std::string arg = input ? "in" + std::to_string(o.index)
                              : "kept" + std::to_string(o.index);
      g += "#define " + macro + "(x) " + glsl_load(input ? types[k] : widened(types[k]), e.load_types[k]) + "\n";
      signature += (k ? ", " : "") + e.load_types[k] + " " + params[k];
      call += (k ? ", " : "") + macro + "(" + arg + ")";
    }
    // precise, as the template's results are: the step's own arithmetic is never contracted
    // with its consumer's.
    g += "#undef C\n#define C " + e.compute + "\n" + e.compute + " nxv_chain_step" + n + "(" + signature +
         ") {\n  precise C r = " + e.expr + ";\n  return r;\n}\n";
    body += "  " + e.compute + " t" + n + " = nxv_chain_step" + n + "(" + call + ");\n";
    if (s == last) {
      result.compute = e.compute;
      break;
    }
    // The result, rounded to its type, passes through an exclusive or with a zero the compiler
    // cannot see (the grid has one row): no step's arithmetic is folded into its neighbour's.
    DType kept = widened(step.out);
    if (step.out == DType::F16) {
      // f16 rounds in integer code (nxv_f16_bits.glsl) from the float a store converts: a
      // float16_t conversion would be folded away with its widening.
      g += "#define NXV_CHAIN_STORE" + n + "(v) nxv_f16_bits(float(v))\n";
      g += "#define NXV_CHAIN_KEEP" + n + "(x) " + opaque(kept, "nxv_f16_value(x)") + "\n";
    } else {
      g += "#define NXV_CHAIN_STORE" + n + "(v) " + glsl_store(step.out) + "\n";
      g += "#define NXV_CHAIN_KEEP" + n + "(x) " + opaque(kept, glsl_load(step.out, glsl_storage_type(kept))) + "\n";
    }
    body += "  precise " + glsl_storage_type(kept) + " kept" + n + " = NXV_CHAIN_KEEP" + n + "(NXV_CHAIN_STORE" + n + "(t" + n +
            "));\n";
  }
  g += "#undef C\n#define C " + result.compute + "\n" + result.compute + " nxv_chain(";
  std::string args;
  for (size_t i = 0; i < in.size(); ++i) {
    g += (i ? ", " : "") + glsl_scalar_register_type(in[i]) + " in" + std::to_string(i);
    args += (i ? ", " : "") + (i < 3 ? std::string(1, "abc"[i]) : "in" + std::to_string(i));
  }
  g += ") {\n  uint zero = NXV_CHAIN_ZERO;\n" + body + "  return t" + std::to_string(last) + ";\n}\n";
  for (DType t : in) result.features.add_type(t);
  result.defines.assign(defines.begin(), defines.end());
  result.defines.emplace_back("NXV_GENERATED", "1");
  result.expr = "nxv_chain(" + args + ")";
  generated = std::move(g);
  return result;
}

}  // namespace nxv
