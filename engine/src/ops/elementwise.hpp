// Elementwise family internals: the op table (elementwise_defs.cpp) and the kernel builder
// (elementwise.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nxv/dtype.hpp"

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

struct EwDef {
  int arity;
  EwLoad load;
  unsigned classes;  // classes of `compute` the op accepts
  EwOut out;
  // The GLSL expression over a, b, c (loaded values) giving the output compute type C.
  std::function<std::string(const EwCtx&)> expr;
};

const std::map<std::string, EwDef, std::less<>>& elementwise_defs();

EwClass ew_class(DType t);
// Nx.Type.merge for two input types (the comparison compute type).
DType ew_common_type(DType a, DType b);

}  // namespace nxv
