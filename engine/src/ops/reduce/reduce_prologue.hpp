// Reduction prologues: sum, product, max or min of an elementwise chain's result computed per
// element where the first pass loads it (graph/prologue_fusion.hpp), so that softmax's exp or
// a cross-entropy's product is never stored. Each element is the chain's value rounded to its
// type, as the chain's own kernel stores it, then folded: the bits of the ops run one by one.
#pragma once
#include <string>
#include <vector>

#include "exec/launch.hpp"
#include "ops/family.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/reduce/reduce_plan.hpp"

namespace nxv {

// "" when the prologue of `a` runs in the reduction of this check (its tensors c.inputs[0..
// a.prologue_inputs), `reduced` flags per axis of a.prologue_shape, kernel_types the
// reduction's own); else why not, with `invalid` set where the request is malformed.
std::string reduce_prologue_error(const CheckArgs& c, const ReduceAttrs& a, const std::vector<bool>& reduced,
                                  const std::vector<DType>& kernel_types, bool& invalid);

struct ReducePrologue {
  DType type = DType::F32;               // the chain's result: the reduction's input type
  std::string generated;                 // nxv_prologue(o, i, k) and the chain's functions
  Defines defines;                       // the chain's library switches
  FeatureSet features;
  std::vector<std::byte> params;         // a ReducePrologueParams
  std::vector<AddressPatch> patches;     // its tensors' addresses in it
  std::vector<uint32_t> slots;           // the tensors it reads
};

// The prologue of a lowering over the row geometry `g` of a.prologue_shape (row-major):
// tensors read in place where their broadcast views collapse to the same rows, else copied
// first (row-major, prologue-shaped).
ReducePrologue make_reduce_prologue(const LowerArgs& a, const ReduceAttrs& at, const std::vector<bool>& reduced);

}  // namespace nxv
