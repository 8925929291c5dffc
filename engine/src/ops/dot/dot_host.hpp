// dot on CPU drivers (lavapipe) through the system's optimised BLAS. A CPU driver runs compute
// shaders on the same cores as the host, and its generated code gathers every load in a GEMM's
// inner loop (bench/RESULTS.md, lavapipe dot): OpenBLAS on the same memory is several times
// faster. The GEMM runs as a host step of the executable, in stream order: the work recorded
// before it is submitted and waited for, then the host multiplies through the buffers' mappings.
//
// Chosen only on CPU devices, for f32 and f64 operands of the output's type whose matrices
// BLAS can address (one unit stride per matrix), when OpenBLAS loads (libopenblas.so.0, found
// at run time: nothing links against it), for products of at least 2^18 multiply-adds.
// NX_VULKAN_HOST_BLAS=0 turns it off, =1 takes every product it can.
#pragma once
#include <cstddef>
#include <cstdint>

#include "exec/launch.hpp"
#include "nxv/device.hpp"
#include "ops/dot/dot_kernels.hpp"
#include "ops/dot/dot_plan.hpp"

namespace nxv {

// Appends the host GEMM and returns true where this tier takes the product; false (nothing
// appended) where the GPU kernels should.
bool append_host_gemm(Device& device, LaunchBuilder& builder, DType out, const GemmShape& g, const GemmOperand& a,
                      const GemmOperand& b, BufferRef c);

// Whether this tier would take a product of these types and shape, before its operands'
// layouts are known (append_host_gemm may still refuse those): a CPU device, BLAS found, f32 or
// f64, NX_VULKAN_HOST_BLAS and the size threshold.
bool host_gemm_candidate(Device& device, DType out, const GemmShape& g, DType a, DType b);

// Whether a BLAS library was found (tests).
bool host_blas_available();

// For host steps: whether the `bytes` from `ref` lie in one mapped, coherent chunk of
// `buffer`, and their address there.
bool host_reachable(const Buffer& buffer, BufferRef ref, uint64_t bytes);
std::byte* host_address(const Buffer& buffer, BufferRef ref);

}  // namespace nxv
