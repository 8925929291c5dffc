// An opt-in reduced-precision f32 product on bf16 tensor cores (NX_VULKAN_DOT_F32=bf16x3, read
// per call): each f32 operand x is split into bf16 parts hi + lo (dot_split_bf16x3.comp) and
// one GEMM over the contracting axis tripled sums hi*hi + hi*lo + lo*hi in f32 (the lo*lo term
// is dropped). hi is x rounded to 8 significant bits (|lo| <= 2^-8 |x|), lo the next 8
// (x - hi - lo within 2^-17 |x|), so each product is within 2^-15 |a| |b| (the dropped term
// 2^-16, the two roundings of lo 2^-17 each), against f32's 2^-24: a 3x-work product at
// tensor-core speed, for users who accept that error. Taken for f32 x f32 ->
// f32 GEMMs (not matrix-vector shapes, not with an epilogue) where dot has a cooperative-matrix
// tier for bf16; never on CPU drivers. NXV_DOT_BF16X3_ANY=1 takes it on any device (tests).
#pragma once
#include "ops/dot/dot_kernels.hpp"
#include "ops/family.hpp"

namespace nxv {

// Appends the product that way and returns true, or returns false (nothing appended).
bool append_gemm_bf16x3(const LowerArgs& a, DType out, const GemmShape& g, const GemmOperand& A,
                        const GemmOperand& B, BufferRef c, bool has_epilogue);

// Every variant of dot_split_bf16x3.comp (kernel_variant.hpp).
void declare_split_bf16x3_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
