// The GEMM of CPU drivers (gemm_cpu.comp): register blocks of TM rows (the same in every lane)
// by TN columns per invocation, read straight from global memory through any strides, every
// type. Chosen on CPU drivers (gemm_cpu_paths) unless NXV_DOT_NO_CPU_GEMM=1 (read per call).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/dot/dot_kernels.hpp"

namespace nxv {

// TM rows per workgroup, TN columns per invocation, WG invocations per workgroup.
struct CpuGemmTile {
  uint32_t tm = 16, tn = 1, wg = 64;
};

// The tile when the CPU GEMM serves this product, nullopt otherwise. NXV_DOT_CPU_TILE=
// "tm,tn,wg" overrides it (tuning; tm, tn up to 32, wg 8..256).
std::optional<CpuGemmTile> cpu_gemm_tile(const DeviceCore& core, const GemmShape& shape, DType out);

// C (row-major [batch, m, n], at `c`) = A * B.
void append_gemm_cpu(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                     const GemmOperand& b, BufferRef c, const CpuGemmTile& tile,
                     const DotEpilogue* epi = nullptr);

// Every variant of gemm_cpu.comp (kernel_variant.hpp).
void declare_gemm_cpu_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
