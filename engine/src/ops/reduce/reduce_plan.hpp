// The geometry of a reduction: any view and set of reduced axes brought to rows of
// [outer, reduced, inner] with one stride each, and the passes that reduce them (a pass that
// cuts long rows into chunks leaves partial results for a second pass).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nxv/tensor.hpp"

namespace nxv {

struct ReduceGeometry {
  uint64_t outer = 1, reduced = 1, inner = 1;
  uint64_t outer_stride = 0, reduced_stride = 0, inner_stride = 0;  // elements
};

// [outer, reduced, inner] for `view` with `reduced_axes` (flags per axis), when the kept
// axes before the reduced ones, the reduced ones and the kept ones after them each collapse
// to one stride; nullopt otherwise (the caller then lays the view out kept-first).
std::optional<ReduceGeometry> reduce_geometry(const Tensor& view, const std::vector<bool>& reduced_axes);

// The view with its kept axes first and its reduced axes last, each in their own order.
Tensor kept_first_view(const Tensor& view, const std::vector<bool>& reduced_axes);

struct ReducePass {
  ReduceGeometry geometry;
  uint64_t chunks = 1, chunk_len = 0;
  uint32_t threads_per_row = 1;  // invocations that share one row chunk
  // They sit workgroup_size / threads_per_row apart in the workgroup (not side by side), so that
  // neighbouring invocations read neighbouring columns (rows with inner > 1).
  bool lanes_apart = false;
  uint64_t rows() const { return geometry.outer * chunks * geometry.inner; }
};

// One pass, or two when rows are too few to fill `target_threads` and long enough to cut:
// the second reduces the first's partials, laid out [outer, chunks, inner]. With
// `lanes_apart_ok`, columns (inner > 1) of moderate length that would take two passes take one
// instead, each shared by up to 32 invocations `workgroup_size` / 32 or more columns wide.
std::vector<ReducePass> plan_reduce_passes(const ReduceGeometry& g, uint64_t target_threads, uint32_t workgroup_size,
                                           bool lanes_apart_ok);

}  // namespace nxv
