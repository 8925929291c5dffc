// A dot's epilogue (ops/elementwise/store_epilogue.hpp): an elementwise chain applied to each
// product where the dot kernels store it (dot_attrs.hpp). Inputs 1 and 2 are read through
// their strides over the output's [batch, m, n] (dot_epilogue.h). Every tier that runs on
// lavapipe applies it (SIMT tile, rows, cpu, matvec, split-K's sum); the cooperative-matrix
// tiers are not chosen for a dot with an epilogue.
#pragma once
#include <string>

#include "ops/dot/dot_attrs.hpp"
#include "ops/elementwise/store_epilogue.hpp"
#include "ops/family.hpp"

namespace nxv {

using DotEpilogue = StoreEpilogue;

// "" when `a.epilogue` runs in the dot kernels of this check; else why not, with `invalid`
// set where the request is malformed (types, shapes, operand count).
std::string dot_epilogue_error(const CheckArgs& c, const DotAttrs& a, bool& invalid);

// The epilogue of a lowering: its extra tensors read in place where their broadcast views'
// axis groups (batch, left free, right free) collapse to one stride each, else copied first.
DotEpilogue make_dot_epilogue(const LowerArgs& a, const DotAttrs& at);

}  // namespace nxv
