// conv on Winograd's F(2x2, 3x3) (conv_winograd.comp): 3 x 3 kernels, unit strides and
// dilations, one feature and batch group, f32 or f64, any padding and permutations, with or
// without an epilogue (applied where the last pass stores). The kernel and the input are
// transformed into 16 matrices each, multiplied by dot's batched GEMM (16 products of tiles x
// channels by channels x filters: 2.25 times fewer multiplications than the direct sum) and
// transformed back into the output. Batch items go in chunks whose transformed input and
// products stay within a budget of device memory.
//
// Rounding: each output sums the same products in other combinations, so its worst-case error
// bound is a small multiple of the direct sum's (the tests allow 8x); measured errors are no
// larger than the direct GEMM's (bench/RESULTS.md). Outputs that come out Inf or NaN are
// computed again directly, so non-finite values are as the direct sum gives them, and a sum
// of zeros is +0.0 as the direct sum's.
//
// Taken on GPUs for convs large enough to gain (at least 64 channels and filters, output
// tiles mostly inside the output); never on CPU drivers (their BLAS im2col path is faster).
// NX_VULKAN_CONV_WINOGRAD=0 turns it off, =1 takes it wherever the geometry allows (tests).
// Read per call.
#pragma once
#include "ops/conv/conv_kernels.hpp"
#include "ops/conv/conv_plan.hpp"
#include "ops/elementwise/store_epilogue.hpp"
#include "ops/family.hpp"

namespace nxv {

// Appends the conv that way and returns true, or returns false (nothing appended). `input` is
// the input's canonical view; `epi`, where given, the conv's epilogue, applied where the last
// pass stores.
bool append_conv_winograd(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input,
                          const StoreEpilogue* epi = nullptr);

// Every variant of conv_winograd.comp (kernel_variant.hpp).
void declare_winograd_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
