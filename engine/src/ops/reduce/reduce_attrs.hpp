// Attributes of the reduce family's ops, decoded once from the callback's options.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "nxv/attrs.hpp"
#include "nxv/ops.hpp"
#include "ops/elementwise/fusion.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv {

struct Combiner;  // ops/reduce/combiner.hpp

// sum, product, reduce_max, reduce_min, all, any: `axes` (sorted, unique; every axis when the
// option is absent) and `keep_axes`.
struct ReduceAttrs {
  std::vector<int64_t> axes;
  bool all_axes = true;
  bool keep_axes = false;
  std::shared_ptr<const Combiner> combiner;  // reduce/5: the function, traced (option "combiner")
  // Set by the graph passes (sum, product, reduce_max, reduce_min): a chain applied where the
  // result is stored (ops/elementwise/offset_epilogue.hpp), over its tensors after the input.
  std::optional<ElementwiseChain> epilogue;
  DType product = DType::F32;  // with an epilogue: the reduction alone's output type
  // Set by the graph passes (the same ops): the reduced tensor computed per element by a chain
  // over the op's first `prologue_inputs` tensors, broadcast to `prologue_shape`
  // (ops/reduce/reduce_prologue.hpp). Not together with an epilogue.
  std::optional<ElementwiseChain> prologue;
  uint32_t prologue_inputs = 0;
  std::vector<int64_t> prologue_shape;
};

// argmax, argmin: one `axis` (the flattened tensor when absent), `keep_axis`, and which index
// a tie gives (`tie_break: :low | :high`).
struct ArgReduceAttrs {
  int64_t axis = -1;  // -1: every axis, flattened
  bool keep_axis = false;
  bool tie_high = false;
};

}  // namespace nxv

namespace nxv {

// cumulative_sum/product/max/min (Nx.Block.Cumulative*): the axis, and whether to accumulate
// from its end.
struct CumulativeAttrs {
  int64_t axis = 0;
  bool reverse = false;
};

// The fold of sum, product, reduce_max, reduce_min, all, any (argmax: Max, argmin: Min).
FoldKind fold_kind(OpId op);
// Which of a rank-`rank` input's axes the op (with its attributes) reduces.
std::vector<bool> reduced_axes(OpId op, const Attrs& attrs, size_t rank);

}  // namespace nxv
