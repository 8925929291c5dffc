// conv as an explicit im2col and dot's GEMM, for the cooperative-matrix tiers: where dot has
// one for the conv's operands, A is written out (conv_gemm.comp's IM2COL mode, from a
// channels-last copy of the input where channels are not adjacent), multiplied by dot's GEMM
// into [m, n], and moved into the output's layout. Costs a temporary of m x k elements, so it
// serves one feature and batch group, no epilogue, up to one buffer chunk; NXV_CONV_IM2COL=1
// takes it on any device (tests), NXV_CONV_NO_IM2COL=1 never.
#pragma once
#include "ops/conv/conv_kernels.hpp"
#include "ops/conv/conv_plan.hpp"
#include "ops/family.hpp"

namespace nxv {

// Appends the conv that way and returns true, or returns false (nothing appended).
bool append_conv_im2col_gemm(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input,
                             const GemmOperand& kernel);

}  // namespace nxv
