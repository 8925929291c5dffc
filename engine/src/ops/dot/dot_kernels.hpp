// The dot kernels as launches: the tiled GEMM (gemm.comp) and the matrix-vector kernel
// (matvec.comp), with their tile and workgroup shapes chosen per device and problem size.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "device/device_impl.hpp"
#include "exec/launch.hpp"
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

// The accumulator a dot into `out` runs in: f32 for the narrow floats, the output's compute
// type otherwise (integers wrap in it, as Nx wraps in the output type).
std::string dot_acc_type(DType out);

// The tile for `shape` on this device: large tiles where there are enough of them to fill
// the device, smaller ones otherwise; within the shared-memory limit. NXV_DOT_TILE=
// "bm,bn,bk,tm,tn" overrides it (tuning; bk, tm, tn up to 16).
GemmTile choose_gemm_tile(const DeviceCore& core, const GemmShape& shape, const std::string& acc);

// Whether the GEMM on this device is gemm_rows.comp (CPU drivers, B read along n in aligned
// vectors of four; NXV_DOT_NO_ROWS turns it off). It then serves M == 1 too.
bool rows_kernel_fits(const DeviceCore& core, const GemmShape& shape, const GemmOperand& b, DType out);

// C (row-major [batch, m, n], at `c`) = A * B.
void append_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                 const GemmOperand& b, BufferRef c);

// out[b, r] = sum_k mat[b, r, k] * vec[b, k].
void append_matvec(DeviceImpl& impl, LaunchBuilder& builder, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                   const GemmOperand& mat, const GemmOperand& vec, BufferRef dst);

}  // namespace nxv
