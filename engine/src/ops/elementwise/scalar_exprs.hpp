// Scalar expressions: every elementwise op's GLSL expression and its precision policy (compute
// type, when it computes in f64, complex rules, loads), in one place. The elementwise kernel
// runs one of them; a generated kernel composes several (fusion.cpp), before or after other
// families' loops, so eager and fused code give the same bits.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/glsl_types.hpp"
#include "nxv/ops.hpp"

namespace nxv {

// The class of the type an op computes in.
enum EwClass : unsigned { kInt = 1, kFloat = 2, kComplex = 4, kAnyClass = 7 };

// How inputs reach the op expression.
enum class EwLoad {
  ToOut,   // every input converted to the output's compute type (arithmetic, math)
  Common,  // every input converted to the inputs' common type (comparisons)
  Own,     // each input in its own compute type (logical ops, is_nan, bit counts, select's pred)
};

// What the output type must be.
enum class EwOut {
  Same,     // the compute type's class (out type chosen by Nx)
  Inexact,  // float or complex (divide, exp, ...)
  U8,       // booleans
  Real,     // a real float (abs of complex, real, imag, phase)
  Any,      // anything (as_type, select)
};

struct EwCtx {
  DType out;
  std::vector<DType> in;
  DType compute;  // the type whose class picked the expression
};

// One op's row of the table (scalar_defs.cpp).
struct EwDef {
  int arity;
  EwLoad load;
  unsigned classes;  // classes of `compute` the op accepts
  EwOut out;
  // The GLSL expression over a, b, c (loaded values) giving the output compute type C.
  std::function<std::string(const EwCtx&)> expr;
};

// The row of an elementwise op (as_type and bitcast have none: scalar_expr builds theirs).
const EwDef* elementwise_def(OpId op);

EwClass ew_class(DType t);
// Nx.Type.merge for two input types (the comparison compute type).
DType ew_common_type(DType a, DType b);

// An op's expression for one typing, with everything a kernel needs to run it.
struct ScalarExpr {
  std::string compute;                  // GLSL type of the result (C)
  std::vector<std::string> load_types;  // GLSL type each input is loaded as
  std::string expr;                     // over a, b, c
  // Where the op has a rare long path: `expr` without it, over a, b, c and a bool `exact` that
  // it sets where an element needs `expr` itself (elementwise.comp's OP_FAST). Else empty.
  std::string fast_expr;
  FeatureSet features;                  // capabilities the expression and its loads need
  Defines defines;                      // library switches it needs (NXV_POW_F32, ...)
  uint32_t max_workgroups = 0;          // a cap for arithmetic-bound expressions
  auto fields() const { return std::tie(compute, load_types, expr, fast_expr, features, defines, max_workgroups); }
};

// Whether `op` is defined for this typing in Nx (and by the engine); "" when it is, else why
// not. `invalid` is set when the typing is one Nx itself never produces.
std::string elementwise_typing_error(OpId op, DType out, const std::vector<DType>& in, bool& invalid);

// On a device without f64: "" when the f32 form of `op` for this typing still gives Nx's
// results, else why not (the op then runs on the host). sin, cos and tan of 32- and 64-bit
// integers need the exact argument; c64 inverse trigonometric and hyperbolic functions,
// expm1, log1p, tan, division and pow lose their accuracy at extreme arguments in f32.
std::string f64_required_error(OpId op, DType out, const std::vector<DType>& in);

// The expression of `op` (after elementwise_typing_error said yes). `has_f64`: the device
// computes in double where Nx's f64 rounding needs it.
ScalarExpr scalar_expr(OpId op, DType out, const std::vector<DType>& in, bool has_f64);

}  // namespace nxv
