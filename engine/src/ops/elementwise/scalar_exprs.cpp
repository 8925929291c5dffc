// The precision policy of the elementwise expressions: which type each op computes in, when
// it computes in f64 or through a float algorithm of its own, and how inputs are loaded.
#include <algorithm>
#include <map>

#include "ops/elementwise/scalar_exprs.hpp"

namespace nxv {
namespace {

std::string int_limit(DType t, bool max) {
  switch (t) {
    case DType::U8: return max ? "255u" : "0u";
    case DType::U16: return max ? "65535u" : "0u";
    case DType::U32: return max ? "4294967295u" : "0u";
    case DType::U64: return max ? "NXV_U64_MAX" : "0";
    case DType::S8: return max ? "127" : "(-128)";
    case DType::S16: return max ? "32767" : "(-32768)";
    case DType::S32: return max ? "2147483647" : "(-2147483647 - 1)";
    case DType::S64: return max ? "NXV_S64_MAX" : "NXV_S64_MIN";
    default: return "0";
  }
}

// as_type: Nx truncates floats toward zero and writes the integer's low bits; NaN becomes 0 and
// infinities the type's extremes. Complex to real keeps the real part.
std::string cast_expr(DType from, DType to) {
  std::string c = glsl_compute_type(to);
  std::string a = is_complex(from) ? "a.x" : "a";
  if (is_complex(to)) return is_complex(from) ? c + "(a)" : c + "(a, 0)";
  if ((is_float(from) || is_complex(from)) && is_integer(to)) {
    std::string low = dtype_size(to) == 8 ? "nxv_trunc_low64(" + a + ")" : "nxv_trunc_low32(" + a + ")";
    return "(isnan(" + a + ") ? " + c + "(0) : isinf(" + a + ") ? (" + a + " > 0 ? " + c + "(" + int_limit(to, true) +
           ") : " + c + "(" + int_limit(to, false) + ")) : " + c + "(" + low + "))";
  }
  return c + "(" + a + ")";
}

bool as_type_needs_int64(DType from, DType to) {
  return (is_float(from) || is_complex(from)) && is_integer(to) &&
         (dtype_size(to) == 8 || from == DType::F64 || from == DType::C128);
}

// The type whose class selects the op's expression.
DType compute_type(const EwDef& def, OpId op, DType out, const std::vector<DType>& in) {
  if (op == OpId::select) return out;
  switch (def.load) {
    case EwLoad::ToOut: return out;
    case EwLoad::Common: return ew_common_type(in[0], in[1]);
    case EwLoad::Own: return in[0];
  }
  return out;
}

// Nx.BinaryBackend compares an integer with a float exactly (Erlang's number order), but an
// integer of 32 or 64 bits is not exact in f32, nor one of 64 bits in f64. Such pairs compare
// as int64/uint64 against double (nxv_order), so they need both.
bool exact_mixed_compare(const EwDef& def, const std::vector<DType>& in) {
  if (def.load != EwLoad::Common || def.out != EwOut::U8 || in.size() != 2) return false;
  auto wide_int = [](DType t) { return is_integer(t) && dtype_size(t) >= 4; };
  return (wide_int(in[0]) && is_float(in[1])) || (is_float(in[0]) && wide_int(in[1]));
}

std::string exact_mixed_compare_expr(OpId op, const std::vector<DType>& in) {
  static const std::map<OpId, std::string_view> symbols = {
      {OpId::equal, "=="}, {OpId::not_equal, "!="}, {OpId::greater, ">"},
      {OpId::less, "<"},   {OpId::greater_equal, ">="}, {OpId::less_equal, "<="}};
  std::string f = is_float(in[0]) ? "a" : "b";
  std::string order = "nxv_order(a, b) " + std::string(symbols.at(op)) + " 0";
  return op == OpId::not_equal ? "C(isnan(" + f + ") || " + order + ")" : "C(!isnan(" + f + ") && " + order + ")";
}

unsigned rank_of(DType t) { return is_complex(t) ? 2 : is_float(t) ? 1 : 0; }

// Nx.BinaryBackend computes every float result in f64 from the exact inputs and rounds once to
// the output type. Where the device has f64, narrower float outputs compute in f64 when an
// integer input is not exact in f32 (u32, s32, u64, s64: cos(2^31 - 1) needs every bit), and
// for the ops whose f32 result through f32 arithmetic is not within a few ulps (division: GPU
// float division may be 2.5 ulp off; atan2's quotient y / x, which drivers may flush for huge
// x; rsqrt, so that it rounds once as Nx does). sqrt, cbrt and pow round once from float loads
// (nxv_sqrt_f32.glsl, nxv_cbrt_f32, nxv_pow_f32.glsl: doubles inside where needed); erf, erfc
// and erf_inv have float algorithms of their own (nxv_erf_f32.glsl).
// max and min need neither: rounding is monotone, so the larger of the two values rounded is the
// larger value rounded (a ReLU's Nx.max(x, 0) reads an s32 zero).
bool computes_in_f64(OpId op, const EwDef& def, DType out, const std::vector<DType>& in) {
  if (!is_float(out) || out == DType::F64 || def.load != EwLoad::ToOut) return false;
  if (op == OpId::max || op == OpId::min) return false;
  if (op == OpId::divide || op == OpId::atan2 || op == OpId::rsqrt) return true;
  return std::any_of(in.begin(), in.end(), [](DType t) { return is_integer(t) && dtype_size(t) >= 4; });
}

// Kernels bound by arithmetic rather than memory run faster as fewer, longer-lived workgroups:
// 16384 of 256 invocations instead of 65535 measured 1-5% faster for these f32 ops on an H200,
// where memory-bound ones (multiply, negate, exp) lose 1-2% with that cap and sin/cos move
// within the noise (bench/RESULTS.md).
bool arithmetic_bound_f32(OpId op) {
  using enum OpId;
  for (OpId o : {pow, tan, sinh, tanh, asinh, erfc, erf_inv, cbrt})
    if (o == op) return true;
  return false;
}

}  // namespace

std::string elementwise_typing_error(OpId op, DType out, const std::vector<DType>& in, bool& invalid) {
  invalid = false;
  std::string name(op_info(op).name);
  auto bad = [&](std::string why) {
    invalid = true;
    return why;
  };
  if (op == OpId::as_type || op == OpId::bitcast) {
    if (op == OpId::bitcast && dtype_size(in[0]) != dtype_size(out)) return bad("bitcast needs types of the same size");
    return "";
  }
  const EwDef& def = *elementwise_def(op);
  DType ct = compute_type(def, op, out, in);
  if (!(def.classes & ew_class(ct))) return name + " is not defined on " + std::string(dtype_name(ct)) + " in Nx";
  switch (def.out) {
    case EwOut::Same:
      if (def.load == EwLoad::Own && out != in[0] && op != OpId::count_leading_zeros && op != OpId::population_count)
        return bad(name + ": output type must be the input type");
      break;
    case EwOut::Inexact:
      if (is_integer(out)) return bad(name + " needs a float or complex output type");
      break;
    case EwOut::U8:
      if (out != DType::U8) return bad(name + " gives u8 in Nx");
      break;
    case EwOut::Real:
      if (is_complex(out) || (is_complex(in[0]) && !is_float(out))) return bad(name + " gives a real output type");
      // Nx: the real part type of c64 is f32, of c128 f64.
      if (in[0] == DType::C64 && out != DType::F32 && op != OpId::phase) return bad(name + " of c64 gives f32");
      if (in[0] == DType::C128 && out != DType::F64 && op != OpId::phase) return bad(name + " of c128 gives f64");
      if (op == OpId::phase && !is_float(out)) return bad("phase gives a float output type");
      if (!is_complex(in[0]) && op != OpId::phase && out != in[0])
        return bad(name + ": output type must be the input type");
      break;
    case EwOut::Any: break;
  }
  if (def.load == EwLoad::ToOut)
    for (size_t i = (op == OpId::select ? 1 : 0); i < in.size(); ++i)
      if (rank_of(in[i]) > rank_of(out))
        return bad(name + ": an input type is wider than the output type (Nx promotes the output type first)");
  return "";
}

std::string f64_required_error(OpId op, DType out, const std::vector<DType>& in) {
  using enum OpId;
  std::string name(op_info(op).name);
  bool trig = op == sin || op == cos || op == tan;
  bool wide_int = std::any_of(in.begin(), in.end(), [](DType t) { return is_integer(t) && dtype_size(t) >= 4; });
  if (trig && is_float(out) && wide_int)
    return name + " of a 32- or 64-bit integer needs f64 for Nx's exact argument, which the device lacks";
  if (out == DType::C64)
    for (OpId o : {acos, acosh, asin, asinh, atan, atanh, cosh, sinh, tan, tanh, expm1, log1p, divide, pow})
      if (o == op) return name + " of c64 computes in f64 to give Nx's results, and the device lacks f64";
  return "";
}

ScalarExpr scalar_expr(OpId op, DType out, const std::vector<DType>& in, bool has_f64) {
  ScalarExpr s;
  AccType c = acc_of(out);
  auto& features = s.features;
  features.add_type(out);
  for (DType t : in) features.add_type(t);
  std::vector<std::string> load_types(in.size(), glsl_name(c));
  std::string expr;
  if (op == OpId::as_type) {
    if (as_type_needs_int64(in[0], out)) features.need_int64();
    load_types[0] = glsl_compute_type(in[0]);
    expr = cast_expr(in[0], out);
  } else if (op == OpId::bitcast) {
    throw Error(ErrorKind::Unsupported, "bitcast is a view, not an expression");
  } else {
    const EwDef& def = *elementwise_def(op);
    DType ct = compute_type(def, op, out, in);
    features.add_type(ct);
    if (has_f64 && ew_class(ct) == kFloat && computes_in_f64(op, def, out, in)) {
      features.need_f64();
      c = AccType::F64;
      std::fill(load_types.begin(), load_types.end(), glsl_name(c));
    } else if (has_f64 && out == DType::C64 && def.load == EwLoad::ToOut && op != OpId::add &&
               op != OpId::subtract && op != OpId::negate && op != OpId::select) {
      // c64 math and products as Nx does them: in f64, each component rounded once.
      features.need_f64();
      c = AccType::C128;
      std::fill(load_types.begin(), load_types.end(), glsl_name(c));
    }
    for (size_t i = 0; i < in.size(); ++i) {
      if (def.load == EwLoad::Common) load_types[i] = glsl_compute_type(ct);
      else if (def.load == EwLoad::Own || (op == OpId::select && i == 0)) load_types[i] = glsl_compute_type(in[i]);
    }
    expr = def.expr(EwCtx{out, in, ct});
    if (exact_mixed_compare(def, in)) {
      features.need_int64();
      features.need_f64();
      for (size_t i = 0; i < in.size(); ++i)
        load_types[i] = is_float(in[i]) ? "double" : is_signed(in[i]) ? "int64_t" : "uint64_t";
      expr = exact_mixed_compare_expr(op, in);
    }
    // Float results of sqrt, rsqrt and cbrt computed in double: only float rounding is needed
    // (nxv_to_f32.glsl), far cheaper than the double-exact versions.
    if (c == AccType::F64 && out != DType::F64 && (op == OpId::sqrt || op == OpId::rsqrt || op == OpId::cbrt))
      expr = "double(nxv_" + std::string(op_info(op).name) + "_to_f32(a))";
    // A float sqrt rounds correctly in float and integer arithmetic (nxv_sqrt_f32.glsl).
    if (c == AccType::F32 && op == OpId::sqrt) expr = "nxv_sqrt_f32(a)";
    // A float cbrt takes its last Newton step in double from a float load (nxv_to_f32.glsl).
    if (c == AccType::F32 && op == OpId::cbrt && has_f64) {
      features.need_f64();
      expr = "nxv_cbrt_f32(a)";
    }
    // pow of a float result from float loads: double arithmetic only where a float result
    // needs it (nxv_pow_f32.glsl).
    if (c == AccType::F32 && op == OpId::pow && has_f64) {
      features.need_f64();
      s.defines.emplace_back("NXV_POW_F32", "1");
      expr = "nxv_pow_f32(a, b)";
    }
    if (c == AccType::F32 && arithmetic_bound_f32(op)) s.max_workgroups = 16384;
    // sin, cos and tan of real arguments keep their exact reduction of huge arguments out of
    // the per-element code (nxv_real_trig.glsl).
    if (ew_class(ct) == kFloat && (op == OpId::sin || op == OpId::cos || op == OpId::tan))
      s.fast_expr = "nxv_" + std::string(op_info(op).name) + "_fast(a, exact)";
  }
  s.compute = glsl_name(c);
  s.load_types = std::move(load_types);
  s.expr = std::move(expr);
  return s;
}

}  // namespace nxv
