// Fused elementwise chains: several elementwise ops evaluated per element in one kernel, each
// step's scalar expression and precision policy exactly as its own kernel has them, and every
// intermediate rounded through its Nx type's storage, so that a chain gives the bits of the
// same ops run one by one (intermediates whose rounding a driver may drop are refused:
// chain_rounding_error). The op `elementwise_chain` carries an ElementwiseChain as its
// attributes; a reduction's or matmul's prologue and epilogue use the same generated code.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/elementwise/scalar_exprs.hpp"

namespace nxv {

struct ChainOperand {
  enum class From : uint8_t { Input, Step };
  From from = From::Input;
  uint32_t index = 0;  // the op's input, or an earlier step
};

struct ChainStep {
  OpId op;
  DType out;
  std::vector<ChainOperand> operands;
};

// The steps in order; the last one's result is the op's output. Up to three op inputs.
struct ElementwiseChain {
  std::vector<ChainStep> steps;
};

// "" when every step is an elementwise op Nx defines for its operand types (bitcast, a view,
// is not), operands refer to inputs or earlier steps, and the last step gives `out`; else why.
std::string chain_typing_error(const ElementwiseChain& chain, DType out, const std::vector<DType>& in, bool& invalid);

// "" when every intermediate keeps its type's rounding in one kernel; else why not. Drivers
// may drop a float conversion round trip (f16 -> f32 -> f16, f32 -> f64 -> f32) inside a
// kernel, so f16 intermediates, those computed in double into a narrower type, and f32/c64
// ones consumed in double are refused.
// `features`, when given, gains what the chain's kernel needs.
std::string chain_rounding_error(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                                 FeatureSet* features = nullptr);

// The chain as one scalar expression over the op's inputs (loaded as stored): the GLSL of
// its functions goes to `generated`, served to the template as nxv_generated.glsl.
ScalarExpr chain_scalar_expr(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64,
                             std::string& generated);

}  // namespace nxv
