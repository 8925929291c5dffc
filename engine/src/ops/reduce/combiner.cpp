// Combiners of reduce/5 and window_reduce/6: parsing the traced steps, checking them with the
// elementwise typing rules, and generating `nxv_combine` from the fused-chain code
// (ops/elementwise/fusion.cpp), each result rounded to the output type as a stored value would
// be (through code no compiler folds into the next combine).
#include "ops/reduce/combiner.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>

#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw Error(ErrorKind::InvalidArgument, "option combiner: " + why + " in \"" + text + "\"");
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  for (char ch : s) {
    if (ch == sep) {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    } else {
      part += ch;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

std::vector<uint8_t> parse_hex(const std::string& text, const std::string& hex) {
  if (hex.size() % 2 != 0) bad(text, "odd hex digits in a constant");
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    for (size_t j = i; j < i + 2; ++j) {
      char ch = hex[j];
      unsigned d = ch >= '0' && ch <= '9' ? unsigned(ch - '0')
                   : ch >= 'a' && ch <= 'f' ? unsigned(ch - 'a' + 10)
                   : ch >= 'A' && ch <= 'F' ? unsigned(ch - 'A' + 10)
                                             : 16u;
      if (d > 15) bad(text, "a constant's bytes must be hex digits");
      v = v * 16 + d;
    }
    bytes.push_back(uint8_t(v));
  }
  return bytes;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08Xu", v);
  return buf;
}

// A constant as a GLSL literal of its register type (glsl_scalar_register_type), exactly.
std::string literal(const CombinerConstant& k) {
  auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v |= uint32_t(k.bytes[at + i]) << (8 * i);
    return v;
  };
  auto u16 = [&] { return uint32_t(k.bytes[0]) | uint32_t(k.bytes[1]) << 8; };
  auto pair = [&](size_t at) { return "uvec2(" + hex32(u32(at)) + ", " + hex32(u32(at + 4)) + ")"; };
  switch (k.type) {
    case DType::U8: return "uint8_t(" + std::to_string(k.bytes[0]) + "u)";
    case DType::S8: return "int8_t(" + std::to_string(int(int8_t(k.bytes[0]))) + ")";
    case DType::U16: return "uint16_t(" + std::to_string(u16()) + "u)";
    case DType::S16: return "int16_t(" + std::to_string(int(int16_t(uint16_t(u16())))) + ")";
    case DType::U32: return hex32(u32(0));
    case DType::S32: return "int(" + hex32(u32(0)) + ")";
    case DType::U64: return "packUint2x32(" + pair(0) + ")";
    case DType::S64: return "int64_t(packUint2x32(" + pair(0) + "))";
    case DType::F16: return "nxv_f16_value(" + hex32(u16()) + ")";
    case DType::BF16: return "uint16_t(" + hex32(u16()) + ")";
    case DType::F8: case DType::F8E4M3FN: return "uint8_t(" + std::to_string(k.bytes[0]) + "u)";
    case DType::F32: return "uintBitsToFloat(" + hex32(u32(0)) + ")";
    case DType::F64: return "packDouble2x32(" + pair(0) + ")";
    case DType::C64: return "vec2(uintBitsToFloat(" + hex32(u32(0)) + "), uintBitsToFloat(" + hex32(u32(4)) + "))";
    case DType::C128: return "dvec2(packDouble2x32(" + pair(0) + "), packDouble2x32(" + pair(8) + "))";
  }
  return "";
}

std::vector<DType> chain_inputs(const Combiner& c, DType type) {
  std::vector<DType> in{type, type};
  for (const auto& k : c.constants) in.push_back(k.type);
  return in;
}

// The type the kernel keeps values of `t` in: 32 bits at least.
AccType carrier(DType t) {
  switch (t) {
    case DType::U8: case DType::U16: case DType::BF16: case DType::F8: case DType::F8E4M3FN: return AccType::U32;
    case DType::S8: case DType::S16: return AccType::S32;
    default: return acc_of(t);  // the type's scalar register type (float for f16)
  }
}

// The chain's result r (its compute type) rounded to `t` and kept as carrier(t), through an
// exclusive or with a zero the compiler cannot see: no combine is folded into the next.
std::string keep(DType t) {
  std::string acc = glsl_name(carrier(t));
  switch (t) {
    case DType::F16: return "nxv_f16_value(nxv_f16_bits(float(r)) ^ zero)";
    case DType::F32: return "uintBitsToFloat(floatBitsToUint(float(r)) ^ zero)";
    case DType::F64: return "packDouble2x32(unpackDouble2x32(double(r)) ^ uvec2(zero))";
    case DType::C64: return "uintBitsToFloat(floatBitsToUint(vec2(r)) ^ uvec2(zero))";
    case DType::C128:
      return "dvec2(packDouble2x32(unpackDouble2x32(dvec2(r).x) ^ uvec2(zero)), "
             "packDouble2x32(unpackDouble2x32(dvec2(r).y) ^ uvec2(zero)))";
    case DType::BF16: case DType::F8: case DType::F8E4M3FN: {
      std::string store = glsl_store(t);  // of v
      return "(uint(" + store.replace(store.find("(v)"), 3, "(r)") + ") ^ zero)";
    }
    default: return "(" + acc + "(" + glsl_storage_type(t) + "(r)) ^ " + acc + "(zero))";
  }
}

}  // namespace

Combiner parse_combiner(std::string_view text) {
  Combiner c;
  c.text = std::string(text);
  std::map<std::string, uint32_t> constant_index;
  auto steps = split(text, ';');
  if (steps.empty()) bad(c.text, "no steps");
  for (const auto& step_text : steps) {
    auto tokens = split(step_text, ' ');
    if (tokens.size() < 3) bad(c.text, "a step needs an op, a type and operands");
    auto op = find_op(tokens[0]);
    if (!op) bad(c.text, "unknown op " + tokens[0]);
    ChainStep step{*op, parse_dtype(tokens[1]), {}};
    for (size_t i = 2; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if (t == "x") {
        step.operands.push_back({ChainOperand::From::Input, 0});
      } else if (t == "acc") {
        step.operands.push_back({ChainOperand::From::Input, 1});
      } else if (t[0] == 's' && t.size() > 1 && t.find('#') == std::string::npos &&
                 t.find_first_not_of("0123456789", 1) == std::string::npos) {
        uint32_t n = uint32_t(std::stoul(t.substr(1)));
        if (n >= c.chain.steps.size()) bad(c.text, "operand " + t + " names a step not before it");
        step.operands.push_back({ChainOperand::From::Step, n});
      } else if (auto hash = t.find('#'); hash != std::string::npos) {
        auto [it, fresh] = constant_index.try_emplace(t, uint32_t(c.constants.size() + 2));
        if (fresh) {
          CombinerConstant k{parse_dtype(t.substr(0, hash)), parse_hex(c.text, t.substr(hash + 1))};
          if (k.bytes.size() != dtype_size(k.type)) bad(c.text, "constant " + t + " has the wrong size for its type");
          c.constants.push_back(std::move(k));
        }
        step.operands.push_back({ChainOperand::From::Input, it->second});
      } else {
        bad(c.text, "unknown operand " + t);
      }
    }
    c.chain.steps.push_back(std::move(step));
  }
  return c;
}

std::string combiner_error(const Combiner& c, DType type, bool has_f64, bool& invalid) {
  std::vector<DType> in = chain_inputs(c, type);
  std::string why = chain_typing_error(c.chain, type, in, invalid, in.size());
  if (!why.empty()) return "the function's " + why;
  for (size_t s = 0; s < c.chain.steps.size(); ++s) {
    const ChainStep& step = c.chain.steps[s];
    if (step.op == OpId::as_type || has_f64) continue;
    std::vector<DType> types;
    for (const auto& o : step.operands)
      types.push_back(chain_operand_type(c.chain, in, o));
    if (std::string needs = f64_required_error(step.op, step.out, types); !needs.empty())
      return "the function's step " + std::to_string(s) + ": " + needs;
  }
  return "";
}

namespace {

CombinerCode emit_combiner_code(const Combiner& c, DType type, bool has_f64) {
  CombinerCode code;
  std::vector<DType> in = chain_inputs(c, type);
  std::string chain_glsl;
  ScalarExpr s = chain_scalar_expr(c.chain, in, has_f64, chain_glsl);
  code.acc = carrier(type);
  const std::string acc = glsl_name(code.acc);
  code.load = acc + "(x)";
  code.store = glsl_storage_type(type) + "(v)";
  std::string reg = glsl_scalar_register_type(type);
  std::string args = reg + "(x), " + reg + "(acc)";
  for (const auto& k : c.constants) args += ", " + literal(k);
  std::ostringstream g;
  g << chain_glsl << "#undef C\n"
    << "// the reduction's combiner (ops/reduce/combiner.cpp)\n"
    << acc << " nxv_combine(" << acc << " x, " << acc << " acc) {\n"
    << "  uint zero = gl_NumWorkGroups.y - 1u;\n"
    << "  precise " << s.compute << " r = nxv_chain(" << args << ");\n"
    << "  return " << keep(type) << ";\n}\n";
  code.generated = g.str();
  code.defines = s.defines;
  code.features = s.features;
  code.features.add_type(type);
  add_acc_features(code.features, code.acc);
  return code;
}

}  // namespace

const CombinerCode& combiner_code(const Combiner& c, DType type, bool has_f64) {
  // Keyed by what the code is made of: an eager reduce/5 with the same function emits it once.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, DType, bool>, std::unique_ptr<const CombinerCode>> emitted;
  std::lock_guard<std::mutex> lock(mutex);
  auto& code = emitted[{c.text, type, has_f64}];
  if (!code) code = std::make_unique<const CombinerCode>(emit_combiner_code(c, type, has_f64));
  return *code;
}

}  // namespace nxv
