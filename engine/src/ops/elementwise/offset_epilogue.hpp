// Offset epilogues (store_epilogue.hpp): a store epilogue whose kernel knows only the offset
// of the element it stores in the row-major output (conv's kernels, split-K's final sum,
// reductions). Each extra tensor is read through element strides over the output's axes,
// adjacent axes merged where every tensor allows (offset_epilogue.h: OffsetEpilogueParams), so
// that a bias broadcast along one axis is read in place, never materialised.
#pragma once
#include <cstddef>

#include "ops/elementwise/offset_epilogue.h"
#include "ops/elementwise/store_epilogue.hpp"
#include "ops/family.hpp"

namespace nxv {

// The epilogue of a lowering whose chain reads a.inputs[first_extra..] as its inputs 1 and 2:
// params hold an OffsetEpilogueParams, patches its addresses. Extra tensors are read in place
// where their broadcast views' indices fit 31 bits with non-negative strides, else copied
// (row-major, output-shaped) first.
StoreEpilogue make_offset_epilogue(const LowerArgs& a, const ElementwiseChain& chain, DType product, size_t first_extra);

}  // namespace nxv
