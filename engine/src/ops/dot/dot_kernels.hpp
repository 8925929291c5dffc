// The dot kernels as launches: the tiled GEMM (gemm.comp) and the matrix-vector kernel
// (matvec.comp), with their tile and workgroup shapes chosen per device and problem size.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "device/device_impl.hpp"
#include "exec/launch.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/kernel_variant.hpp"
#include "ops/dot/dot_plan.hpp"
#include "ops/dot/gemm_push.h"
#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct StoreEpilogue;  // ops/elementwise/store_epilogue.hpp: applied where a kernel stores, where given
using DotEpilogue = StoreEpilogue;

// An operand as the kernels read it: where it starts, its type and its element strides in
// its reading order: A {batch, m, k}, B {batch, k, n}; a matrix-vector product's matrix
// {batch, row, k} and vector {batch, unused, k}.
struct GemmOperand {
  BufferRef ref;
  DType type = DType::F32;
  std::array<int64_t, 3> strides{};
  // A chain applied to each value where it is loaded (dot_prologue.hpp; the SIMT tile and
  // the matrix-vector kernel only), or none.
  const ElementwiseChain* prologue = nullptr;
};

struct GemmTile {
  uint32_t bm = 64, bn = 64, bk = 16, tm = 4, tn = 4;
  uint32_t invocations() const { return (bm / tm) * (bn / tn); }
  auto fields() const { return std::tie(bm, bn, bk, tm, tn); }
};

// Whether kernels are shaped for a CPU driver (llvmpipe); tuning's gpu_paths gives CPU
// drivers the GPU choices (tests run those paths on lavapipe).
bool gemm_cpu_paths(const DeviceCore& core);

// The accumulator a dot into `out` runs in: f32 for the narrow floats, the output's compute
// type otherwise (integers wrap in it, as Nx wraps in the output type).
AccType dot_acc_type(DType out);
// MAC(acc, a, b) in the accumulator type `acc`: fma for floats (one rounding per product, full
// precision), wrap-around for integers, (re, im) products for complex.
std::string dot_mac(AccType acc);

// The tile for `shape` on this device: large tiles where there are enough of them to fill
// the device, smaller ones otherwise; within the shared-memory limit. Tuning's
// dot.tile=bm,bn,bk,tm,tn overrides it (bk, tm, tn up to 16).
GemmTile choose_gemm_tile(const DeviceCore& core, const GemmShape& shape, AccType acc);

// `t` with its k step halved until its shared memory (acc_bytes per staged value) fits the device.
GemmTile fit_shared_memory(const DeviceCore& core, GemmTile t, uint32_t acc_bytes);

// The tiles choose_gemm_tile picks by size on GPU paths for accumulators `acc` (largest first)
// and the CPU drivers' one, untuned, fitted to `info`'s shared memory: for declaring variants.
std::vector<GemmTile> gemm_gpu_tiles(const DeviceInfo& info, AccType acc);
GemmTile gemm_cpu_tile(const DeviceInfo& info, AccType acc);

// Whether the tile core reads shared memory four-wide (32-bit accumulators; register tile in
// groups of four; tuning's dot.no_vec4 turns it off where `tuned`).
bool gemm_vec4_shared(const GemmTile& tile, AccType acc, bool tuned = true);

// How the tile core (gemm_tile.glsl) reads and stages its operands.
struct GemmTileOpts {
  bool a_k_unit = false, b_n_unit = false;  // the A tile is read along k, the B tile along n
  bool vec4_shared = false;                 // shared memory read four-wide
  bool a_vec4 = false, b_vec4 = false;      // the operand read in vectors of four along its unit axis
  uint32_t warp_x = 0;                      // 0, or invocation columns per subgroup of 32
  bool one_tile = false;                    // one tile per workgroup (dot: the grid covers them all)
  bool inside = false;                      // every tile and k step wholly inside: no edge checks
  uint32_t slices = 1;                      // dot: groups of invocations splitting k inside the workgroup
  auto fields() const {
    return std::tie(a_k_unit, b_n_unit, vec4_shared, a_vec4, b_vec4, warp_x, one_tile, inside, slices);
  }
};

// One output tile per workgroup, with no loops over tiles, batches and splits, where
// tuning's dot.one_tile is set and the grid's limits allow it.
bool gemm_one_tile(const DeviceCore& core, const GemmShape& shape, const GemmTile& tile);

// Whether every tile of `shape` and every k step lies wholly inside the matrices (and each
// invocation loads the same number of items), so that the kernel reads and stores without
// edge checks (GPU paths, 32-bit accumulators `acc`; tuning's dot.no_inside turns it off). Splits
// of k are then multiples of tile.bk.
bool gemm_tiles_inside(const DeviceCore& core, const GemmShape& shape, const GemmTile& tile, const GemmTileOpts& o,
                       AccType acc);
// The part of it that is the tile's: each invocation loads as many A and B items.
bool gemm_loads_even(const GemmTile& tile, const GemmTileOpts& o);

// Invocation columns per subgroup of 32 for `tile` on GPU paths: `fallback`, or dot.warp_x
// (0: row by row); 0 where the tile does not divide into such blocks.
uint32_t gemm_warp_x(const DeviceCore& core, const GemmTile& tile, uint32_t fallback = 0);
// `wx` where `tile` divides into blocks of it, else 0 (gemm_warp_x's test).
uint32_t gemm_warp_x_fits(const GemmTile& tile, uint32_t wx);

// Whether an operand of `type` with strides {batch, outer, inner} (the GEMM's order: A is
// {batch, m, k}, B {batch, k, n}), read along `unit_axis` (1 or 2, whose stride is 1) in a
// tile of `tile_extent` along it, can be loaded in aligned vectors of four that never straddle
// an edge (`extent`: the operand's extent along that axis): GPU paths only, dot.gvec4=0
// turns it off.
bool gemm_operand_vec4(const DeviceCore& core, DType type, const std::array<int64_t, 3>& strides,
                       uint64_t byte_offset, int unit_axis, int64_t extent, uint32_t tile_extent);
// Whether values of `type` load in vectors of four at all (gemm_operand_vec4's type test).
bool gemm_vec4_loadable(DType type);
// The vector of four accumulators of `acc` ("" where there is none: complex).
std::string gemm_acc4_type(AccType acc);
// GLSL converting a vector of four of `type`, named q, to `acc4` (swizzles name x, so not x).
std::string gemm_load4(DType type, const std::string& acc4);

// The defines of the tile core (gemm_tile.glsl): tile, A_K_UNIT, B_N_UNIT, VEC4_SHARED, ACC4,
// A_VEC4, B_VEC4 (with A_VEC, A_VALIGN, LOAD_A4 and likewise for B), WARP_X.
void add_gemm_tile_defines(Defines& d, const GemmTile& tile, AccType acc, const GemmTileOpts& opts,
                           DType a, DType b);
// Workgroups of a GEMM-shaped kernel: n / bn by m / bm tiles, `z` batches (times splits),
// each within the device's limits (the kernels loop over what exceeds them).
std::array<uint32_t, 3> gemm_grid(const DeviceCore& core, const GemmTile& tile, uint64_t n, uint64_t m, uint64_t z);

// The A and B buffers of a GEMM-shaped kernel and their loads into the accumulator type.
void add_gemm_operand_defines(Defines& d, DType a, DType b, AccType acc);

// Accumulator, MAC, C/OUT buffer and STORE_OUT defines of a GEMM into `out` from `x` and `y`.
void add_gemm_common_defines(Defines& d, DType out, DType x, DType y, AccType acc);

// The source of a tile-core template (gemm.comp, conv_gemm.comp) into `out` from `a` and `b`:
// workgroup, common, tile and operand defines; the caller adds its own, then the library uses.
KernelKey gemm_tile_kernel_key(const char* name, DType out, DType a, DType b, const GemmTile& tile,
                               const GemmTileOpts& opts);

// Split-K count for `workgroups` workgroups over `k`: about `target` workgroups in all on GPUs
// where there are fewer, each split at least 256 long, at most `most`; tuning's dot.splits
// overrides on any device (tests). The k per split is a multiple of `align`. Returns
// {splits, k per split}.
std::pair<uint32_t, uint32_t> split_k(const DeviceCore& core, uint64_t workgroups, uint64_t k, uint64_t outputs,
                                      uint64_t target, uint64_t most, uint64_t align = 1);

// Partial sums of `splits` x `n` accumulators of type `acc`, bound to a new slot.
BufferRef partial_sums(DeviceImpl& impl, LaunchBuilder& builder, uint64_t splits, uint64_t n, AccType acc);

// The second pass of split-K: dst[i] (row-major, n elements) = the splits' sums of element i
// (part[s * n + i]), added in order of s. The partial sums are of the output's accumulator
// type (dot_acc_type) unless `partials` names another (the 8-bit tensor cores' 32-bit integers).
void append_split_sum(DeviceImpl& impl, LaunchBuilder& builder, DType out, BufferRef part, BufferRef dst, uint64_t n,
                      uint32_t splits, const DotEpilogue* epi = nullptr, std::optional<DType> partials = std::nullopt);


// Launches a GEMM-shaped `kernel` (GemmPush parameters; workgroups of tile.bm x tile.bn
// outputs), with split-K over k in multiples of `k_align` where the tiles alone are too few to
// fill the device (partial sums in `acc`, then the split-sum pass into `c`, which applies `epi`).
// `attach`, where given, adds to the multiply's launch (a parameter block, buffers it reads)
// before any other, and places `epi`'s parameters itself.
void launch_gemm_kernel(DeviceImpl& impl, LaunchBuilder& builder, const Kernel& kernel, DType out,
                        const GemmShape& shape, const GemmOperand& a, const GemmOperand& b, BufferRef c,
                        const GemmTile& tile, AccType acc, uint32_t k_align,
                        const DotEpilogue* epi = nullptr, const std::function<void(Launch&)>& attach = {});

// Launches `kernel` once over `grid`, A, B and C patched into `push` (no split-K).
void launch_gemm_once(LaunchBuilder& builder, const Kernel& kernel, const std::array<uint32_t, 3>& grid,
                      const GemmPush& push, const GemmOperand& a, const GemmOperand& b, BufferRef c,
                      const DotEpilogue* epi = nullptr);

// Whether each of the product's sums runs over k in order into one accumulator per element,
// whichever kernel takes it (no split-K, matrix-vector, cooperative-matrix or bf16x3 tier): a
// product computed with its operands swapped then has the same bits.
bool sums_in_order(const DeviceCore& core, DType out, const GemmShape& shape, DType a, DType b);

// C (row-major [batch, m, n], at `c`) = A * B, then the epilogue where given (the
// cooperative-matrix tiers are then not taken).
void append_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                 const GemmOperand& b, BufferRef c, const DotEpilogue* epi = nullptr);

// How matvec.comp takes a product of `rows` sums over `k`: with COLS, LX * VW outputs across
// the lanes and LY invocations splitting each sum; else LY outputs, LX invocations per sum.
// Each invocation sums its share of k in order; the shares combine pairwise through shared
// memory (lane l adds lane l + s, for s from half the lanes down to 1); with split-K, grid z
// splits k further and dot_split_sum.comp adds the splits in order.
struct MatvecLanes {
  bool cols = false, vw4 = false;
  uint32_t lx = 1, ly = 1;
  uint32_t vecs = 1;  // vectors per workgroup (where all share the matrix)
  uint32_t splits = 1, k_chunk = 0;
  uint32_t outputs() const { return cols ? lx * (vw4 ? 4 : 1) : ly; }
  uint32_t k_lanes() const { return cols ? ly : lx; }
};
MatvecLanes matvec_lanes(const DeviceCore& core, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                         const GemmOperand& mat);

// Where a matrix-vector product's output (b, r) lies: at b * strides[0] + r * strides[1]
// (row-major [batch, rows] without them), and, for an epilogue, the axes of the dot's
// [batch, m, n] (0, 1, 2) that b and r run along.
struct MatvecOutput {
  std::optional<std::array<uint32_t, 2>> strides;
  uint32_t b_axis = 0, r_axis = 2;
};

// out[b, r] = sum_k mat[b, r, k] * vec[b, k], stored as `output` says.
void append_matvec(DeviceImpl& impl, LaunchBuilder& builder, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                   const GemmOperand& mat, const GemmOperand& vec, BufferRef dst, const DotEpilogue* epi = nullptr,
                   const MatvecOutput& output = {});

// Whether a product of a few columns (N from 2 to 16, no batch) runs as one matrix-vector
// product per column on this device (GPUs): tiles of such a product are mostly empty, and too
// few to fill the device.
bool matvec_per_column(const DeviceCore& core, const GemmShape& shape);
// The same for a product of a few rows (M from 2 to 16): one matrix-vector product per row,
// the very products its transpose (N and M swapped) runs per column.
bool matvec_per_row(const DeviceCore& core, const GemmShape& shape);

// Every variant of gemm.comp, gemm_rows.comp, matvec.comp and dot_split_sum.comp (kernel_variant.hpp).
void declare_dot_kernel_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
