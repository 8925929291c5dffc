// The cooperative-matrix (tensor-core) tier of the GEMM: gemm_coopmat.comp for f16 x f16 and
// bf16 x bf16 into f32 or the inputs' type, accumulated in f32, and for s8 x s8 / u8 x u8 into
// integer outputs, accumulated in 32-bit integers (exact as Nx's wrapping sums: outputs of up
// to 32 bits, 64-bit ones while K products cannot overflow), where the device reports a
// subgroup-scope shape for those types (VK_KHR_cooperative_matrix; bf16 also needs
// VK_KHR_shader_bfloat16's matrices). Never on CPU drivers; off with the capability mask
// (NX_VULKAN_DISABLE=coopmat, bf16 for bf16 only) or NXV_DOT_NO_COOPMAT=1 (read per call).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "ops/dot/dot_kernels.hpp"
#include "ops/elementwise/store_epilogue.hpp"

namespace nxv {

// The workgroup tile (bm x bn, bk along k), each subgroup's block (wm x wn), the fragment
// shape (fm x fn x fk, a shape the device reports) and the subgroup size.
struct CoopmatTile {
  uint32_t bm = 128, bn = 128, bk = 32, wm = 64, wn = 64;
  uint32_t fm = 16, fn = 16, fk = 16, subgroup = 32;
  uint32_t subgroups() const { return (bm / wm) * (bn / wn); }
  auto fields() const { return std::tie(bm, bn, bk, wm, wn, fm, fn, fk, subgroup); }
};

// The tile when the tier serves this product, nullopt otherwise. NXV_DOT_COOPMAT_TILE=
// "bm,bn,bk,wm,wn" overrides the tile (tuning; multiples of the fragment shape).
std::optional<CoopmatTile> coopmat_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                             const GemmOperand& b, DType out);

// A gathered from a conv's input instead of read as a matrix (conv's implicit GEMM:
// gemm_coopmat.comp's CONV_A, conv_gather16.glsl): the channels-last input, and the conv's
// parameter block (ConvParams, then the kernel-position table: ops/conv/conv_push.h). C is
// then the conv's output, through the block's output strides; `lanes_m`: stored with lanes
// along m (output positions), for outputs whose filters are not adjacent.
struct CoopmatGatheredA {
  BufferRef input;
  std::vector<std::byte> params;
  uint32_t spatial = 0;
  bool input_dilation = false;
  bool lanes_m = false;
  // The conv's epilogue (ops/conv/conv_epilogue.hpp), its parameters inside `params`, and its
  // tensors' addresses as patches of `params`; applied where C is stored (or by split-K's sum).
  const StoreEpilogue* epilogue = nullptr;
  std::vector<AddressPatch> patches;
};

// C (row-major [batch, m, n], at `c`) = A * B on cooperative matrices. With `gathered`, A is
// the conv's (one batch; `a` then gives only its type) and C its output.
void append_gemm_coopmat(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                         const GemmOperand& a, const GemmOperand& b, BufferRef c, const CoopmatTile& tile,
                         const CoopmatGatheredA* gathered = nullptr);

// Every variant of gemm_coopmat.comp this device can run (none without cooperative matrices).
void declare_gemm_coopmat_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
