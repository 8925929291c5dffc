// The cooperative-matrix (tensor-core) tier of the GEMM: gemm_coopmat.comp for f16 x f16 and
// bf16 x bf16 into f32 or the inputs' type, accumulated in f32, where the device reports a
// subgroup-scope shape for those types (VK_KHR_cooperative_matrix; bf16 also needs
// VK_KHR_shader_bfloat16's matrices). Never on CPU drivers; off with the capability mask
// (NX_VULKAN_DISABLE=coopmat, bf16 for bf16 only) or NXV_DOT_NO_COOPMAT=1 (read per call).
#pragma once
#include <cstdint>
#include <optional>

#include "ops/dot/dot_kernels.hpp"

namespace nxv {

// The workgroup tile (bm x bn, bk along k), each subgroup's block (wm x wn), the fragment
// shape (fm x fn x fk, a shape the device reports) and the subgroup size.
struct CoopmatTile {
  uint32_t bm = 128, bn = 128, bk = 32, wm = 64, wn = 64;
  uint32_t fm = 16, fn = 16, fk = 16, subgroup = 32;
  uint32_t subgroups() const { return (bm / wm) * (bn / wn); }
};

// The tile when the tier serves this product, nullopt otherwise. NXV_DOT_COOPMAT_TILE=
// "bm,bn,bk,wm,wn" overrides the tile (tuning; multiples of the fragment shape).
std::optional<CoopmatTile> coopmat_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                             const GemmOperand& b, DType out);

// C (row-major [batch, m, n], at `c`) = A * B on cooperative matrices.
void append_gemm_coopmat(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                         const GemmOperand& a, const GemmOperand& b, BufferRef c, const CoopmatTile& tile);

}  // namespace nxv
