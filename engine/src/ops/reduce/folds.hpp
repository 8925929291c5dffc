// Folds shared by the families that reduce (reduce, window, cumulative): the accumulator type
// a fold runs in, its identity and its combining expression, with Nx's semantics (NaN wins
// max/min, integers wrap in the output type, f16/bf16/f8 accumulate in f32).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kernels/glsl_types.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

enum class FoldKind { Sum, Product, Max, Min, All, Any };

struct Fold {
  AccType acc;
  std::string ident;    // its identity (also Nx's padding value for window ops)
  std::string combine;  // an expression of a and b; may name each more than once
};

// The accumulator: the output's compute type for sums and products (f32 for the narrow
// floats), the input's for max/min, uint for all/any.
AccType fold_acc_type(FoldKind kind, DType out, DType in);
Fold fold_for(FoldKind kind, AccType acc);
// The capabilities an accumulator needs (f64 for double, int64 for 64-bit integers).
void add_acc_features(FeatureSet& features, AccType acc);
// What a kernel over buffers of `types` folding in `acc` needs of the device.
FeatureSet fold_features(std::initializer_list<DType> types, AccType acc);
// subgroupShuffleXor(v, m) of an accumulator as an expression of v and m: 64-bit integers travel
// as two 32-bit halves (shuffles of int64 need the extended-types feature).
std::string shuffle_xor(AccType acc);
// <name>_STORE and <name>_ALIGN of a buffer of Nx type `t` (name: "IN", "OUT", ...).
void add_buffer_defines(Defines& d, const std::string& name, DType t);

}  // namespace nxv
