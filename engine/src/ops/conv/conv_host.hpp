// conv's A (im2col) written by the host, for CPU drivers: there the host and the driver share
// the cores and the memory, and a C++ loop that copies runs of adjacent channels (or single
// elements, channels apart) fills A several times faster than the gather kernel llvmpipe
// compiles. A host step of the executable, in stream order (dot_host.hpp's way); the system's
// BLAS multiplies A next (conv_im2col.cpp).
#pragma once
#include <memory>

#include "exec/launch.hpp"
#include "ops/conv/conv_kernels.hpp"
#include "ops/conv/conv_plan.hpp"

namespace nxv {

// Whether the host can read `input` and write an A of `type` into `a` (mapped, coherent, each
// within one chunk; non-negative strides).
bool conv_host_im2col_fits(const LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input, DType type,
                           const Buffer& a);

// Appends the host step writing A, row-major [groups, m, k], at `a_out`.
void append_conv_host_im2col(LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input, DType type,
                             BufferRef a_out);

}  // namespace nxv
