// conv's implicit GEMM as launches (conv_gemm.comp): tile, split-K and kernel variant chosen
// per device and problem, the geometry in a parameter block with the kernel-position table.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/device_impl.hpp"
#include "exec/launch.hpp"
#include "ops/conv/conv_plan.hpp"
#include "ops/dot/dot_kernels.hpp"
#include "ops/elementwise/store_epilogue.hpp"

namespace nxv {

// The input as the kernel gathers it: where its canonical view [batch, channels, spatial...]
// starts and that view's element strides (non-negative, every reachable index below 2^31).
struct ConvInput {
  BufferRef ref;
  DType type = DType::F32;
  std::vector<int64_t> strides;
};

// Writes the result (contiguous, at `out`, `out_strides`: the canonical axes' strides in it).
// `kernel` is B: strides {per group, along k, along n}, k = (kernel position, channel).
// `out_type` is the conv's own type; with `epi` (conv_epilogue.hpp) the buffer holds epi->out,
// the chain applied where the kernel (or split-K's sum) stores.
void append_conv_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out_type, const ConvPlan& plan,
                      const ConvInput& input, const GemmOperand& kernel, BufferRef out,
                      const std::vector<int64_t>& out_strides, const StoreEpilogue* epi = nullptr);

// conv's parameter block (ConvParams, then the kernel-position table) for `input` and the
// canonical output strides `out_strides`.
std::vector<std::byte> conv_params(const ConvPlan& plan, const ConvInput& input, const std::vector<int64_t>& out_strides,
                                   const StoreEpilogue* epi);

// Elements per 16-byte load where conv_gather16.glsl can gather A from `input` (channels
// adjacent; channels per group, strides and offset multiples of the vector; one group), else 0.
uint32_t conv_gather16_vector(const ConvGeometry& g, const ConvInput& input);

// A (im2col) of the conv's GEMM, materialised: row-major [group, m, k] of the input's type at
// `a_out`, for dot's GEMM tiers to multiply (conv_im2col.hpp).
void append_conv_im2col(DeviceImpl& impl, LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input,
                        BufferRef a_out);

// Every variant of conv_gemm.comp and conv_im2col16.comp (kernel_variant.hpp).
void declare_conv_kernel_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
