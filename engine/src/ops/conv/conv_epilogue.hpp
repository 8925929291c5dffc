// A conv's epilogue (ops/elementwise/store_epilogue.hpp): an elementwise chain applied to each
// output element where conv_gemm.comp stores it, or where split-K's final sum
// (dot_split_sum.comp) does. Its extra tensors are read at the output element's position:
// its offset in the row-major output decomposed over the output's axes (conv_push.h:
// OffsetEpilogueParams), adjacent axes merged where every tensor's strides allow, so that a bias
// broadcast along the feature axis is read in place, never materialised.
#pragma once
#include <string>

#include "ops/conv/conv_attrs.hpp"
#include "ops/conv/conv_push.h"
#include "ops/elementwise/offset_epilogue.hpp"
#include "ops/family.hpp"

namespace nxv {

// "" when `a.epilogue` runs in the conv kernels of this check; else why not, with `invalid`
// set where the request is malformed (types, shapes, operand count).
std::string conv_epilogue_error(const CheckArgs& c, const ConvAttrs& a, bool& invalid);

// The epilogue of a lowering (make_offset_epilogue over the tensors after the two operands).
// Extra tensors are read in place where their broadcast views' indices fit 31 bits with
// non-negative strides, else copied (row-major, output-shaped) first.
StoreEpilogue make_conv_epilogue(const LowerArgs& a, const ConvAttrs& at);

}  // namespace nxv
