// conv on dot's cooperative-matrix tiers: where dot has one for the conv's operands, A is
// gathered from a channels-last input (a channels-last copy first where the channels are not
// adjacent) and multiplied on the tensor cores. Two ways:
// - implicit: dot's cooperative-matrix GEMM gathers A itself, 8 channels per load, and stores
//   into the output's layout (gemm_coopmat.comp's CONV_A), where channels and strides are
//   multiples of 8 (NXV_CONV_NO_IMPLICIT=1 turns it off);
// - im2col: A is written out first (conv_im2col16.comp, 16 bytes at a time where the layout
//   allows, else conv_gemm.comp's IM2COL mode), a temporary of m x k elements within one buffer
//   chunk, multiplied by dot's GEMM into [m, n], which then moves into the output's layout.
// - on CPU drivers, for f32/f64 convs the system's BLAS takes (dot_host.hpp), A written by the
//   host (conv_host.hpp) and multiplied by BLAS, feature and batch groups included.
// The GPU ways serve one feature and batch group; an epilogue only the implicit way. NXV_CONV_IM2COL=1 takes the tier
// on any device (tests), NXV_CONV_NO_IM2COL=1 never.
#pragma once
#include "ops/conv/conv_kernels.hpp"
#include "ops/conv/conv_plan.hpp"
#include "ops/family.hpp"

namespace nxv {

// Appends the conv that way and returns true, or returns false (nothing appended).
// `epi`: the conv's epilogue (conv_epilogue.hpp), applied where the implicit way stores; the
// im2col way takes none.
bool append_conv_im2col_gemm(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input,
                             const GemmOperand& kernel, const StoreEpilogue* epi = nullptr);

}  // namespace nxv
