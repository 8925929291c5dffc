// The workgroup-scope cooperative-matrix GEMM (VK_NV_cooperative_matrix2, gemm_coopmat2.comp):
// f16 x f16 and bf16 x bf16 into f32 or the inputs' type, accumulated in f32, with each
// operand read along a unit-stride axis through tensor layouts. Chosen before the KHR tier
// (dot_coopmat.hpp), which takes what this one declines. Opt-in for now: NXV_DOT_COOPMAT2=1
// (read per call), since on an H100 (driver 580.159) it ran 4x slower than the KHR tier and
// its pipelines take the driver seconds to build (bench/RESULTS.md, stop 24). Never on CPU
// drivers; off with the capability mask (NX_VULKAN_DISABLE=coopmat2, or coopmat for both
// tiers), NXV_DOT_NO_COOPMAT2=1 or NXV_DOT_NO_COOPMAT=1 (both tiers).
#pragma once
#include <cstdint>
#include <optional>

#include "ops/dot/dot_kernels.hpp"

namespace nxv {

// The workgroup's accumulator matrix (bm x bn), the k step, the workgroup's invocations and
// the k steps per trip of the unclamped loop.
struct Coopmat2Tile {
  uint32_t bm = 128, bn = 256, bk = 64, invocations = 256, unroll = 4;
};

// The tile when this GEMM serves the product, nullopt otherwise. NXV_DOT_COOPMAT2_TILE=
// "bm,bn,bk,invocations[,unroll]" overrides the tile (tuning; it must fit a flexible shape the device reports).
std::optional<Coopmat2Tile> coopmat2_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                               const GemmOperand& b, DType out);

// C (row-major [batch, m, n], at `c`) = A * B on workgroup-scope cooperative matrices.
void append_gemm_coopmat2(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                          const GemmOperand& a, const GemmOperand& b, BufferRef c, const Coopmat2Tile& tile);

}  // namespace nxv
