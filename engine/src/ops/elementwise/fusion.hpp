// Fused elementwise chains: several elementwise ops evaluated per element in one kernel, each
// step's scalar expression and precision policy exactly as its own kernel has them, and every
// intermediate rounded through its Nx type's storage, so that a chain gives the bits of the
// same ops run one by one (chains a driver would compile differently in one kernel are run
// step by step: chain_rounding). The op `elementwise_chain` carries an ElementwiseChain as its
// attributes; a reduction's or matmul's prologue and epilogue use the same generated code.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nxv/attrs.hpp"
#include "ops/elementwise/scalar_exprs.hpp"

namespace nxv {

struct ChainOperand {
  enum class From : uint8_t { Input, Step, Constant };
  From from = From::Input;
  uint32_t index = 0;  // the op's input, an earlier step, or one of the chain's constants
};

struct ChainStep {
  OpId op;
  DType out;
  std::vector<ChainOperand> operands;
};

// A number the chain's code holds (a graph's constant node folded in): `value` as Nx converts it
// to `type` (chain_constant_literal), read by steps as an intermediate of `type` would be.
struct ChainConstant {
  DType type;
  AttrNumber value;
};

// The steps in order; the last one's result is the op's output. Up to three op inputs.
struct ElementwiseChain {
  std::vector<ChainStep> steps;
  std::vector<ChainConstant> constants;
};

// The type of an operand of a step (an input's, an earlier step's or a constant's).
DType chain_operand_type(const ElementwiseChain& chain, const std::vector<DType>& in, const ChainOperand& o);

// `value` converted to `type` as Nx converts a constant (the bits a constant of that type
// holds), as a GLSL expression of the type an intermediate of `type` is kept in between steps;
// nullopt where the conversion is not exact or plain on the host: an integer a float type
// cannot hold, a float into an integer type, a complex into a real one, an f32 subnormal
// (GPUs may flush those), f16, bf16 and f8 (converted on the device: an as_type step).
std::optional<std::string> chain_constant_literal(DType type, const AttrNumber& value);

// The type a constant's value is held in before conversion to the output type (s32, s64, u32,
// u64, f32, f64, c64 or c128: the narrowest that holds it exactly).
DType constant_source_type(const AttrNumber& value);

// "" when every step is an elementwise op Nx defines for its operand types (bitcast, a view,
// is not), operands refer to inputs or earlier steps, and the last step gives `out`; else why.
// `max_inputs`: the elementwise kernel takes three; a reduction's combiner (ops/reduce/
// combiner.hpp) takes its two operands and its constants.
std::string chain_typing_error(const ElementwiseChain& chain, DType out, const std::vector<DType>& in, bool& invalid,
                               size_t max_inputs = 3);

// On a device without f64: why a step of the chain cannot run (f64_required_error of the first
// step that needs f64), empty when none does.
std::string chain_f64_required_error(const ElementwiseChain& chain, const std::vector<DType>& in);

// Why a chain cannot run as one kernel with the bits of its steps run one by one. Each
// intermediate is rounded to its type in code no compiler folds (f16 in integer code, the
// others through their storage type and an exclusive or with a zero the compiler cannot see),
// so what is left is what a kernel declares for all its code: a kernel that uses f64
// declares the f64 float controls (nxv_float_controls.glsl), under which a driver may compile
// float arithmetic differently (lavapipe: asinh, exp, sin... 1 ulp apart).
enum class ChainSplit : uint8_t {
  None,
  // Step `step` computes in float (or vec2) through several roundings and its own kernel
  // has no f64, but the chain's kernel uses f64 (an f64/c128 input or another step's).
  FloatMathUnderF64Controls,
};

struct ChainRounding {
  ChainSplit reason = ChainSplit::None;
  size_t step = 0;
  std::string message;  // "" when reason is None
};

// Whether the chain fuses; `features`, when given, gains what the chain's kernel needs.
ChainRounding chain_rounding(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             FeatureSet* features = nullptr);

// Whether `op`'s expression `e` computes in float or vec2 through more than one rounding
// (so that how a driver compiles it matters): every float op but those whose result is exact
// or one IEEE operation.
bool several_float_roundings(OpId op, const ScalarExpr& e);

// Whether the kernel of `e` alone (one op, or one step) uses f64.
bool uses_f64(const ScalarExpr& e);

// The chain as one scalar expression over the op's inputs (loaded as stored): the GLSL of
// its functions goes to `generated`, served to the template as nxv_generated.glsl. `name`
// names the chain's function (its steps' functions and macros start with it, upper case for
// the macros), so that two chains can share a kernel.
ScalarExpr chain_scalar_expr(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             std::string& generated, std::string_view name = "nxv_chain");

}  // namespace nxv
