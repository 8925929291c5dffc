// bfloat16 kernels from f16 SPIR-V. The installed glslang has no bfloat16 type
// (GL_EXT_bfloat16), so a bf16 kernel is written with float16_t, compiled, and its module
// retyped per SPV_KHR_bfloat16: `OpTypeFloat 16` gains the FP Encoding operand BFloat16KHR (0),
// the Float16 capability becomes BFloat16TypeKHR (5116), BFloat16CooperativeMatrixKHR (5118)
// is declared, and `OpExtension "SPV_KHR_bfloat16"` joins the extensions. Sound only where
// the 16-bit float type appears as nothing but the component type of cooperative matrices
// (values travel as integer bits elsewhere): the bits are then the same and the hardware
// reads them as bf16. Anything else using the type (a value, a pointer, a vector, a constant)
// would silently compute in the other format, so it is refused.
#pragma once
#include <cstdint>
#include <vector>

namespace nxv {

// The module retyped as described; throws Error(Internal) where the module uses the 16-bit
// float type other than as a cooperative matrix's component, or has none.
std::vector<uint32_t> spirv_f16_to_bf16(const std::vector<uint32_t>& words);

}  // namespace nxv
