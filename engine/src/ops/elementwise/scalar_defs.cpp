// The scalar expression table: for each elementwise op, its arity, how inputs are loaded, which type
// classes it computes in, what output type Nx gives it, and its GLSL expression. The math lives
// in kernels/glsl/nxv_math.glsl (overloaded per compute type).
#include <string>

#include "ops/elementwise/scalar_exprs.hpp"

namespace nxv {

EwClass ew_class(DType t) {
  if (is_complex(t)) return kComplex;
  if (is_float(t)) return kFloat;
  return kInt;
}

DType ew_common_type(DType a, DType b) {
  if (a == b) return a;
  auto bits = [](DType t) { return int(dtype_size(t)) * 8; };
  if (is_complex(a) || is_complex(b)) {
    bool wide = a == DType::C128 || b == DType::C128 || a == DType::F64 || b == DType::F64;
    return wide ? DType::C128 : DType::C64;
  }
  if (is_float(a) || is_float(b)) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    if (is_float(a) && is_float(b)) {
      if (a == DType::F32 || b == DType::F32) return DType::F32;
      return DType::F32;  // f16 vs bf16: both exact in f32
    }
    DType f = is_float(a) ? a : b;
    return f == DType::F32 ? DType::F32 : f;  // Nx: float type wins over integers
  }
  bool sa = is_signed(a), sb = is_signed(b);
  int n = std::max(bits(a), bits(b));
  if (sa == sb) {
    if (n <= 8) return sa ? DType::S8 : DType::U8;
    if (n <= 16) return sa ? DType::S16 : DType::U16;
    if (n <= 32) return sa ? DType::S32 : DType::U32;
    return sa ? DType::S64 : DType::U64;
  }
  int ubits = sa ? bits(b) : bits(a);
  if (ubits < 32 && n <= 32) return DType::S32;
  return DType::S64;
}

namespace {

EwClass cls(const EwCtx& c) { return ew_class(c.compute); }

std::string by_class(const EwCtx& c, const std::string& i, const std::string& f, const std::string& z = "") {
  switch (cls(c)) {
    case kInt: return i;
    case kFloat: return f;
    default: return z;
  }
}

// A real literal in the output's compute type.
std::string lit(DType out, const std::string& v) {
  return (out == DType::F64 || out == DType::C128) ? "double(" + v + "LF)" : "float(" + v + ")";
}

EwDef binary(unsigned classes, EwOut out, std::function<std::string(const EwCtx&)> e) {
  return {2, EwLoad::ToOut, classes, out, std::move(e)};
}
EwDef same(unsigned classes, std::string i, std::string f, std::string z = "") {
  return binary(classes, EwOut::Same, [i, f, z](const EwCtx& c) { return by_class(c, i, f, z); });
}
EwDef compare(unsigned classes, std::string op) {
  return {2, EwLoad::Common, classes, EwOut::U8, [op](const EwCtx&) { return "C(a " + op + " b)"; }};
}
EwDef logical(std::string op) {
  return {2, EwLoad::Own, kAnyClass, EwOut::U8,
          [op](const EwCtx&) { return "C(nxv_nz(a) " + op + " nxv_nz(b))"; }};
}
// Unary math: float and complex outputs, inputs converted to the output type.
EwDef math(std::string fn, bool complex = true) {
  return {1, EwLoad::ToOut, complex ? unsigned(kFloat | kComplex) : unsigned(kFloat), EwOut::Inexact,
          [fn](const EwCtx& c) { return (cls(c) == kComplex ? "nxv_c" : "nxv_") + fn + "(a)"; }};
}

}  // namespace

const EwDef* elementwise_def(OpId op) {
  static const std::map<OpId, EwDef> d = [] {
    std::map<OpId, EwDef> m;
    // ---- binary arithmetic: inputs converted to the output type ----
    m.emplace(OpId::add, same(kAnyClass, "(a + b)", "(a + b)", "(a + b)"));
    m.emplace(OpId::subtract, same(kAnyClass, "(a - b)", "(a - b)", "(a - b)"));
    m.emplace(OpId::multiply, same(kAnyClass, "(a * b)", "(a * b)", "nxv_cmul(a, b)"));
    m.emplace(OpId::divide, binary(kFloat | kComplex, EwOut::Inexact,
                               [](const EwCtx& c) { return by_class(c, "", "(a / b)", "nxv_cdiv(a, b)"); }));
    m.emplace(OpId::pow, same(kAnyClass, "nxv_ipow(a, b)", "nxv_pow(a, b)", "nxv_cpow(a, b)"));
    m.emplace(OpId::remainder, same(kInt | kFloat, "nxv_rem(a, b)", "nxv_fmod(a, b)"));
    m.emplace(OpId::quotient, same(kInt, "nxv_quot(a, b)", ""));
    m.emplace(OpId::atan2, same(kFloat | kComplex, "", "nxv_atan2(a, b)", "nxv_catan2(a, b)"));
    m.emplace(OpId::max, same(kInt | kFloat, "NXV_IMAX(a, b)", "NXV_FMAX(a, b)"));
    m.emplace(OpId::min, same(kInt | kFloat, "NXV_IMIN(a, b)", "NXV_FMIN(a, b)"));
    m.emplace(OpId::bitwise_and, same(kInt, "(a & b)", ""));
    m.emplace(OpId::bitwise_or, same(kInt, "(a | b)", ""));
    m.emplace(OpId::bitwise_xor, same(kInt, "(a ^ b)", ""));
    m.emplace(OpId::left_shift, same(kInt, "nxv_shl(a, b)", ""));
    m.emplace(OpId::right_shift, same(kInt, "nxv_shr(a, b)", ""));
    // ---- comparisons (u8 out) in the inputs' common type; NaN compares false (!= true) ----
    m.emplace(OpId::equal, compare(kAnyClass, "=="));
    m.emplace(OpId::not_equal, compare(kAnyClass, "!="));
    m.emplace(OpId::greater, compare(kInt | kFloat, ">"));
    m.emplace(OpId::less, compare(kInt | kFloat, "<"));
    m.emplace(OpId::greater_equal, compare(kInt | kFloat, ">="));
    m.emplace(OpId::less_equal, compare(kInt | kFloat, "<="));
    m.emplace(OpId::logical_and, logical("&&"));
    m.emplace(OpId::logical_or, logical("||"));
    m.emplace(OpId::logical_xor, logical("!="));
    // ---- unary math ----
    using enum OpId;
    for (OpId op : {exp, expm1, log, log1p, sigmoid, cos, sin, tan, cosh, sinh, tanh, acos, asin, atan, acosh, asinh,
                    atanh, sqrt, rsqrt, cbrt})
      m.emplace(op, math(std::string(op_info(op).name), true));
    for (OpId op : {erf, erfc, erf_inv}) m.emplace(op, math(std::string(op_info(op).name), false));
    // ---- unary, same type ----
    auto unary = [](unsigned classes, std::string i, std::string f, std::string z = "") {
      return EwDef{1, EwLoad::ToOut, classes, EwOut::Same,
                   [i, f, z](const EwCtx& c) { return by_class(c, i, f, z); }};
    };
    m.emplace(OpId::negate, unary(kAnyClass, "(-a)", "(-a)", "(-a)"));
    m.emplace(OpId::bitwise_not, unary(kInt, "(~a)", ""));
    m.emplace(OpId::ceil, unary(kInt | kFloat, "a", "ceil(a)"));
    m.emplace(OpId::floor, unary(kInt | kFloat, "a", "floor(a)"));
    m.emplace(OpId::round, unary(kInt | kFloat, "a", "nxv_round(a)"));
    m.emplace(OpId::sign, unary(kAnyClass, "nxv_isign(a)", "nxv_sign(a)", "nxv_csign(a)"));
    m.emplace(OpId::conjugate, EwDef{1, EwLoad::ToOut, kComplex, EwOut::Same,
                                 [](const EwCtx& c) {
                                   // Nx writes conjugate(real x) as (x, -0), but (x, +0) for NaN and infinities.
                                   std::string z = c.out == DType::C128 ? "-0.0LF" : "-0.0";
                                   return is_complex(c.in[0]) ? std::string("nxv_conj(a)")
                                                              : "C(a.x, (isnan(a.x) || isinf(a.x)) ? a.y : " + z + ")";
                                 }});
    // abs, real, imag, phase: complex in, real out (inputs in their own type).
    m.emplace(OpId::abs, EwDef{1, EwLoad::Own, kAnyClass, EwOut::Real, [](const EwCtx& c) {
                             return by_class(c, "nxv_iabs(a)", "abs(a)", "nxv_cabs(a)");
                           }});
    m.emplace(OpId::real, EwDef{1, EwLoad::Own, kAnyClass, EwOut::Real,
                            [](const EwCtx& c) { return by_class(c, "C(a)", "C(a)", "C(a.x)"); }});
    m.emplace(OpId::imag, EwDef{1, EwLoad::Own, kAnyClass, EwOut::Real, [](const EwCtx& c) {
                              return by_class(c, "C(a - a)", "C(0)", "C(a.y)");
                            }});
    m.emplace(OpId::phase, EwDef{1, EwLoad::Own, kAnyClass, EwOut::Real, [](const EwCtx& c) {
                               std::string pi = lit(c.out, "3.14159265358979311600");
                               return by_class(c, "(a < 0 ? " + pi + " : C(0))",
                                               "(isnan(a) ? C(a) : ((a < 0 || (a == 0 && 1 / a < 0)) ? " + pi + " : C(0)))",
                                               "C(nxv_atan2(a.y, a.x))");
                             }});
    // Bit counts on the input's storage width.
    auto bitcount = [](const char* name32, const char* name64) {
      return EwDef{1, EwLoad::Own, kInt, EwOut::Same, [=](const EwCtx& c) {
                     int bits = int(dtype_size(c.in[0])) * 8;
                     return bits == 64 ? "C(" + std::string(name64) + "(uint64_t(a)))"
                                       : "C(" + std::string(name32) + "(uint(a), " + std::to_string(bits) + "))";
                   }};
    };
    m.emplace(OpId::count_leading_zeros, bitcount("nxv_clz32", "nxv_clz64"));
    m.emplace(OpId::population_count, bitcount("nxv_popc32", "nxv_popc64"));
    // Predicates (u8 out) on the input's own type.
    m.emplace(OpId::is_nan, EwDef{1, EwLoad::Own, kAnyClass, EwOut::U8, [](const EwCtx& c) {
                                return by_class(c, "C(a != a)", "C(isnan(a))", "C(isnan(a.x) || isnan(a.y))");
                              }});
    m.emplace(OpId::is_infinity, EwDef{1, EwLoad::Own, kAnyClass, EwOut::U8, [](const EwCtx& c) {
                                     return by_class(c, "C(a != a)", "C(isinf(a))", "C(isinf(a.x) || isinf(a.y))");
                                   }});
    m.emplace(OpId::logical_not, EwDef{1, EwLoad::Own, kAnyClass, EwOut::U8,
                                   [](const EwCtx&) { return std::string("C(!nxv_nz(a))"); }});
    // ---- three inputs ----
    // select: the predicate in its own type, the branches converted to the output type.
    m.emplace(OpId::select, EwDef{3, EwLoad::ToOut, kAnyClass, EwOut::Any,
                              [](const EwCtx&) { return std::string("(nxv_nz(a) ? b : c)"); }});
    // clip: Nx compares x > min, then < max (a NaN x gives min, then max... as Nx does).
    m.emplace(OpId::clip, EwDef{3, EwLoad::ToOut, kInt | kFloat, EwOut::Same,
                            [](const EwCtx&) { return std::string("NXV_CLIP(a, b, c)"); }});
    return m;
  }();
  auto it = d.find(op);
  return it == d.end() ? nullptr : &it->second;
}

}  // namespace nxv
