// The dot kernels as launches: the tiled GEMM (gemm.comp) and the matrix-vector kernel
// (matvec.comp), with their tile and workgroup shapes chosen per device and problem size.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "device/device_impl.hpp"
#include "exec/launch.hpp"
#include "kernels/glsl_types.hpp"
#include "ops/dot/dot_plan.hpp"

namespace nxv {

// An operand as the kernels read it: where it starts, its type and its element strides in
// its reading order: A {batch, m, k}, B {batch, k, n}; a matrix-vector product's matrix
// {batch, row, k} and vector {batch, unused, k}.
struct GemmOperand {
  BufferRef ref;
  DType type = DType::F32;
  std::array<int64_t, 3> strides{};
};

struct GemmTile {
  uint32_t bm = 64, bn = 64, bk = 16, tm = 4, tn = 4;
  uint32_t invocations() const { return (bm / tm) * (bn / tn); }
};

// Whether kernels are shaped for a CPU driver (llvmpipe); NXV_DOT_GPU_PATHS=1 gives CPU
// drivers the GPU choices (tests run those paths on lavapipe). Read per call.
bool gemm_cpu_paths(const DeviceCore& core);

// The accumulator a dot into `out` runs in: f32 for the narrow floats, the output's compute
// type otherwise (integers wrap in it, as Nx wraps in the output type).
std::string dot_acc_type(DType out);

// The tile for `shape` on this device: large tiles where there are enough of them to fill
// the device, smaller ones otherwise; within the shared-memory limit. NXV_DOT_TILE=
// "bm,bn,bk,tm,tn" overrides it (tuning; bk, tm, tn up to 16).
GemmTile choose_gemm_tile(const DeviceCore& core, const GemmShape& shape, const std::string& acc);

// The tile in VariantKey::tile (bm, bn: 1..1024; tm, tn, bk: 1..16).
uint32_t pack_gemm_tile(const GemmTile& tile);

// Whether the tile core reads shared memory four-wide (32-bit accumulators, register tile in
// groups of four; NXV_DOT_NO_VEC4 turns it off).
bool gemm_vec4_shared(const GemmTile& tile, const std::string& acc);

// The defines of the tile core (gemm_tile.glsl): tile, A_K_UNIT, B_N_UNIT, VEC4_SHARED, ACC4.
void add_gemm_tile_defines(Defines& d, const GemmTile& tile, const std::string& acc, bool a_k_unit, bool b_n_unit,
                           bool vec4_shared);
// Workgroups of a GEMM-shaped kernel: n / bn by m / bm tiles, `z` batches (times splits),
// each within the device's limits (the kernels loop over what exceeds them).
std::array<uint32_t, 3> gemm_grid(const DeviceCore& core, const GemmTile& tile, uint64_t n, uint64_t m, uint64_t z);

// The A and B buffers of a GEMM-shaped kernel and their loads into the accumulator type.
void add_gemm_operand_defines(Defines& d, DType a, DType b, const std::string& acc);

// Accumulator, MAC, C/OUT buffer and STORE_OUT defines of a GEMM into `out` from `x` and `y`.
void add_gemm_common_defines(Defines& d, DType out, DType x, DType y, const std::string& acc);

// Split-K count for `workgroups` workgroups over `k`: about `target` workgroups in all on GPUs
// where there are fewer, each split at least 256 long, at most `most`; NXV_DOT_SPLITS
// overrides on any device (tests). The k per split is a multiple of `align`. Returns
// {splits, k per split}.
std::pair<uint32_t, uint32_t> split_k(const DeviceCore& core, uint64_t workgroups, uint64_t k, uint64_t outputs,
                                      uint64_t target, uint64_t most, uint64_t align = 1);

// Partial sums of `splits` x `n` accumulators of type `acc`, bound to a new slot.
BufferRef partial_sums(DeviceImpl& impl, LaunchBuilder& builder, uint64_t splits, uint64_t n, const std::string& acc);

// The second pass of split-K: dst[i] (row-major, n elements) = the splits' sums of element i
// (part[s * n + i]), added in order of s.
void append_split_sum(DeviceImpl& impl, LaunchBuilder& builder, DType out, BufferRef part, BufferRef dst, uint64_t n,
                      uint32_t splits);

// Whether the GEMM on this device is gemm_rows.comp (CPU drivers, B read along n in aligned
// vectors of four; NXV_DOT_NO_ROWS turns it off). It then serves M == 1 too.
bool rows_kernel_fits(const DeviceCore& core, const GemmShape& shape, const GemmOperand& b, DType out);

// Launches a GEMM-shaped `kernel` (GemmPush parameters; workgroups of tile.bm x tile.bn
// outputs), with split-K over k in multiples of `k_align` where the tiles alone are too few to
// fill the device (partial sums in `acc`, then the split-sum pass into `c`).
void launch_gemm_kernel(DeviceImpl& impl, LaunchBuilder& builder, const Kernel& kernel, DType out,
                        const GemmShape& shape, const GemmOperand& a, const GemmOperand& b, BufferRef c,
                        const GemmTile& tile, const std::string& acc, uint32_t k_align);

// C (row-major [batch, m, n], at `c`) = A * B.
void append_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                 const GemmOperand& b, BufferRef c);

// out[b, r] = sum_k mat[b, r, k] * vec[b, k].
void append_matvec(DeviceImpl& impl, LaunchBuilder& builder, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                   const GemmOperand& mat, const GemmOperand& vec, BufferRef dst);

}  // namespace nxv
