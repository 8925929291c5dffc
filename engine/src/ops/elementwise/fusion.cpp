// Fused elementwise chains: each step becomes a GLSL function of its loaded operands whose
// body is the step's own scalar expression (with its compute type as C); a chain function
// calls them in order, storing each intermediate in its Nx type and loading it as the next
// step loads an input of that type.
#include "ops/elementwise/fusion.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "kernels/glsl_emissions.hpp"

namespace nxv {
namespace {

DType operand_type(const ElementwiseChain& chain, const std::vector<DType>& in, const ChainOperand& o) {
  return chain_operand_type(chain, in, o);
}

bool exact_in_f32(double x) { return std::isnan(x) || double(float(x)) == x; }

std::string hex32(uint32_t x) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08xu", x);
  return b;
}

std::string f32_literal(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return "uintBitsToFloat(" + hex32(u) + ")";
}

std::string f64_literal(double x) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return "packDouble2x32(uvec2(" + hex32(uint32_t(u)) + ", " + hex32(uint32_t(u >> 32)) + "))";
}

bool f32_subnormal(double x) {
  float f = float(x);
  return f != 0.0f && std::fpclassify(f) == FP_SUBNORMAL;
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

// `value` (a GLSL expression of t's storage type) with its bits exclusive-ored with `zero`, an
// expression of the chain's zero (zero_of).
std::string opaque(DType t, const std::string& value, const std::string& zero) {
  std::string x = "(" + value + ")";
  switch (t) {
    case DType::F32: return "uintBitsToFloat(floatBitsToUint" + x + " ^ " + zero + ")";
    case DType::C64: return "uintBitsToFloat(floatBitsToUint" + x + " ^ uvec2(" + zero + "))";
    case DType::F64: return "packDouble2x32(unpackDouble2x32" + x + " ^ uvec2(" + zero + "))";
    case DType::C128:  // .s and .t: the macro this goes into names its parameter x
      return "dvec2(packDouble2x32(unpackDouble2x32(" + x + ".s) ^ uvec2(" + zero + ")), packDouble2x32(unpackDouble2x32(" +
             x + ".t) ^ uvec2(" + zero + ")))";
    default: return "(" + x + " ^ " + glsl_storage_type(t) + "(" + zero + "))";
  }
}

// The zero that intermediate `n` (a step's result) or constant `n` (`constant`) goes through:
// each its own shift of the chain's zero, so that no two exclusive ors cancel where one value
// passes through two of them (x ^ zero ^ zero is x to a compiler, which then folds the value
// into a constant: llvmpipe dropped a store after dividing by such a folded zero).
std::string zero_of(size_t n, bool constant) {
  return "(zero " + std::string(constant ? "<< " : ">> ") + std::to_string(n % 31 + 1) + "u)";
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

DType chain_operand_type(const ElementwiseChain& chain, const std::vector<DType>& in, const ChainOperand& o) {
  switch (o.from) {
    case ChainOperand::From::Input: return in[o.index];
    case ChainOperand::From::Step: return chain.steps[o.index].out;
    default: return chain.constants[o.index].type;
  }
}

DType constant_source_type(const AttrNumber& value) {
  switch (value.kind) {
    case AttrNumber::Kind::Int:
      return value.i >= INT32_MIN && value.i <= INT32_MAX ? DType::S32 : DType::S64;
    case AttrNumber::Kind::UInt: return value.u <= UINT32_MAX ? DType::U32 : DType::U64;
    case AttrNumber::Kind::Float: return exact_in_f32(value.re) ? DType::F32 : DType::F64;
    default: return exact_in_f32(value.re) && exact_in_f32(value.im) ? DType::C64 : DType::C128;
  }
}

std::optional<std::string> chain_constant_literal(DType type, const AttrNumber& v) {
  using K = AttrNumber::Kind;
  bool integer = v.kind == K::Int || v.kind == K::UInt;
  // An integer as the 64-bit two's complement pattern it wraps from.
  uint64_t bits = v.kind == K::Int ? uint64_t(v.i) : v.u;
  // Integers a float type holds exactly (its significand's bits).
  auto exact_integer = [&](int digits) {
    if (v.kind == K::Int) return v.i >= -(int64_t(1) << digits) && v.i <= (int64_t(1) << digits);
    return v.u <= (uint64_t(1) << digits);
  };
  switch (type) {
    case DType::U8: case DType::U16: case DType::U32: {
      if (!integer) return std::nullopt;
      uint32_t x = uint32_t(bits);
      if (type == DType::U8) x &= 0xffu;
      if (type == DType::U16) x &= 0xffffu;
      return hex32(x);
    }
    case DType::S8: case DType::S16: case DType::S32: {
      if (!integer) return std::nullopt;
      int32_t x = type == DType::S8 ? int32_t(int8_t(bits)) : type == DType::S16 ? int32_t(int16_t(bits)) : int32_t(uint32_t(bits));
      return "int(" + hex32(uint32_t(x)) + ")";
    }
    case DType::U64: case DType::S64: {
      if (!integer) return std::nullopt;
      char b[32];
      std::snprintf(b, sizeof b, "0x%016llxul", static_cast<unsigned long long>(bits));
      return type == DType::S64 ? "int64_t(" + std::string(b) + ")" : std::string(b);
    }
    case DType::F32: case DType::C64: case DType::F64: case DType::C128: {
      bool wide = type == DType::F64 || type == DType::C128, real = type == DType::F32 || type == DType::F64;
      double re = v.re, im = v.kind == K::Complex ? v.im : 0;
      if (integer) {
        if (!exact_integer(wide ? 53 : 24)) return std::nullopt;
        re = v.kind == K::Int ? double(v.i) : double(v.u);
      }
      if (real && v.kind == K::Complex) return std::nullopt;
      if (!wide && (f32_subnormal(re) || f32_subnormal(im))) return std::nullopt;
      auto part = [&](double x) { return wide ? f64_literal(x) : f32_literal(float(x)); };
      if (real) return part(re);
      return std::string(wide ? "dvec2(" : "vec2(") + part(re) + ", " + part(im) + ")";
    }
    default: return std::nullopt;
  }
}

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
      bool input = o.from == ChainOperand::From::Input, step = o.from == ChainOperand::From::Step;
      if ((input && o.index >= in.size()) || (step && o.index >= s))
        return where + ": an operand names " + (input ? "an input the op does not have" : "a step not before it");
      if (o.from == ChainOperand::From::Constant &&
          (o.index >= chain.constants.size() ||
           !chain_constant_literal(chain.constants[o.index].type, chain.constants[o.index].value)))
        return where + ": an operand names a constant the chain does not have or cannot hold";
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
  auto wide = [](DType t) { return t == DType::F64 || t == DType::C128; };
  bool kernel_f64 = std::any_of(in.begin(), in.end(), wide) ||
                    std::any_of(chain.constants.begin(), chain.constants.end(), [&](const ChainConstant& c) { return wide(c.type); });
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
  if (features) {
    for (DType t : in) features->add_type(t);
    for (const auto& c : chain.constants) features->add_type(c.type);
  }
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
                             std::string& generated, std::string_view name) {
  count_glsl_emission();
  const std::string fn(name);
  std::string macros = fn;
  for (char& ch : macros) ch = char(std::toupper(static_cast<unsigned char>(ch)));
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
      std::string macro = macros + "_LOAD" + n + "_" + std::to_string(k);
      // A constant is kept as an intermediate is, through the same opaque zero: no driver
      // folds it into the step's arithmetic, which then runs as it does on a loaded value.
      std::string arg = input ? "in" + std::to_string(o.index)
                        : o.from == ChainOperand::From::Step ? "kept" + std::to_string(o.index)
                                                             : "konst" + std::to_string(o.index);
      g += "#define " + macro + "(x) " + glsl_load(input ? types[k] : widened(types[k]), e.load_types[k]) + "\n";
      signature += (k ? ", " : "") + e.load_types[k] + " " + params[k];
      call += (k ? ", " : "") + macro + "(" + arg + ")";
    }
    // precise, as the template's results are: the step's own arithmetic is never contracted
    // with its consumer's.
    g += "#undef C\n#define C " + e.compute + "\n" + e.compute + " " + fn + "_step" + n + "(" + signature +
         ") {\n  precise C r = " + e.expr + ";\n  return r;\n}\n";
    body += "  " + e.compute + " t" + n + " = " + fn + "_step" + n + "(" + call + ");\n";
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
      g += "#define " + macros + "_STORE" + n + "(v) nxv_f16_bits(float(v))\n";
      g += "#define " + macros + "_KEEP" + n + "(x) " + opaque(kept, "nxv_f16_value(x)", zero_of(s, false)) + "\n";
    } else {
      g += "#define " + macros + "_STORE" + n + "(v) " + glsl_store(step.out) + "\n";
      g += "#define " + macros + "_KEEP" + n + "(x) " +
           opaque(kept, glsl_load(step.out, glsl_storage_type(kept)), zero_of(s, false)) + "\n";
    }
    body += "  precise " + glsl_storage_type(kept) + " kept" + n + " = " + macros + "_KEEP" + n + "(" + macros + "_STORE" + n + "(t" + n +
            "));\n";
  }
  g += "#undef C\n#define C " + result.compute + "\n" + result.compute + " " + fn + "(";
  std::string args;
  for (size_t i = 0; i < in.size(); ++i) {
    g += (i ? ", " : "") + glsl_scalar_register_type(in[i]) + " in" + std::to_string(i);
    args += (i ? ", " : "") + (i < 3 ? std::string(1, "abc"[i]) : "in" + std::to_string(i));
  }
  std::string constants;
  for (size_t c = 0; c < chain.constants.size(); ++c) {
    const ChainConstant& k = chain.constants[c];
    DType kept = widened(k.type);
    constants += "  precise " + glsl_storage_type(kept) + " konst" + std::to_string(c) + " = " +
                 opaque(kept, chain_constant_literal(k.type, k.value).value(), zero_of(c, true)) + ";\n";
    result.features.add_type(k.type);
  }
  g += ") {\n  uint zero = NXV_CHAIN_ZERO;\n" + constants + body + "  return t" + std::to_string(last) + ";\n}\n";
  for (DType t : in) result.features.add_type(t);
  result.defines.assign(defines.begin(), defines.end());
  result.defines.emplace_back("NXV_GENERATED", "1");
  result.expr = fn + "(" + args + ")";
  generated = std::move(g);
  return result;
}

}  // namespace nxv
