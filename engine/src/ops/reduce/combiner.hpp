// The combiner of reduce/5 and window_reduce/6: the Elixir function fun.(element, acc), traced
// once on two scalar parameters of the output type (Nx.Vulkan.Combiner), as elementwise steps
// (an ElementwiseChain whose inputs are the element, the accumulator and the function's
// constants). A reduction's or window's kernel calls it as one generated GLSL function, each
// step with the scalar expression and precision policy of its own elementwise kernel.
//
// The option "combiner" spells the steps, ';' between them, each "<op> <type> <operand>...":
// an operand is `x` (the element), `acc` (the accumulator), `s<N>` (step N's result) or a
// constant `<type>#<hex>` (its bytes as Nx stores them, in memory order). The last step's
// type is the output type. Example: "multiply s32 x acc;add s32 s0 s32#01000000".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/glsl_types.hpp"
#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct CombinerConstant {
  DType type;
  std::vector<uint8_t> bytes;  // as stored, little-endian
};

struct Combiner {
  ElementwiseChain chain;  // inputs: 0 the element, 1 the accumulator, 2 + k constant k
  std::vector<CombinerConstant> constants;
  std::string text;        // as given (named in messages)
};

// Throws Error(InvalidArgument) for text that does not parse.
Combiner parse_combiner(std::string_view text);

// "" when the combiner runs natively over values of `type` on a device (`has_f64`); else why
// not, with `invalid` set when Nx itself would not produce such a combiner.
std::string combiner_error(const Combiner& c, DType type, bool has_f64, bool& invalid);

// The GLSL of a combiner over values of `type`: the kernel keeps values as `acc` (32 bits at
// least, so that shared memory and subgroup shuffles take it: the bits for bf16 and f8),
// reads a stored value x as `load`, writes v as `store`, and combines with
// `nxv_combine(x, acc)` defined in `generated` (which the key serves as nxv_generated.glsl).
struct CombinerCode {
  AccType acc = AccType::U32;
  std::string load;   // of x (IN_STORE) to acc
  std::string store;  // of v (acc) to the storage type
  std::string generated;
  Defines defines;    // the steps' library switches and NXV_GENERATED
  FeatureSet features;
  auto fields() const { return std::tie(acc, load, store, generated, defines, features); }
};
// Emitted once per combiner text, type and f64 capability (a process-wide table, like the
// kernel cache): later calls return the same code.
const CombinerCode& combiner_code(const Combiner& c, DType type, bool has_f64);

}  // namespace nxv
