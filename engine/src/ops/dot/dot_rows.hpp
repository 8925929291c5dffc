// The row kernel of CPU drivers (gemm_rows.comp): TM rows of A per workgroup, 4 * TN4 columns
// of B per invocation read in aligned vectors of four along n. It serves M == 1 too.
#pragma once
#include <vector>

#include "ops/dot/dot_kernels.hpp"

namespace nxv {

// Whether the GEMM on this device is gemm_rows.comp (CPU drivers, B read along n in aligned
// vectors of four; tuning's dot.no_rows turns it off).
bool rows_kernel_fits(const DeviceCore& core, const GemmShape& shape, const GemmOperand& b, DType out);

// C (row-major [batch, m, n], at `c`) = A * B, then the epilogue where given.
void append_gemm_rows(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                      const GemmOperand& a, const GemmOperand& b, BufferRef c, const DotEpilogue* epi = nullptr);

// Every variant of gemm_rows.comp (kernel_variant.hpp).
void declare_gemm_rows_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
