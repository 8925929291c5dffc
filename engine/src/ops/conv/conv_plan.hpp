// conv's geometry: Nx's conv/4 in canonical axes (input [batch, channels, spatial...], kernel
// [filters, channels per group, spatial...], result [batch / batch groups, filters,
// spatial...]) as a GEMM per group (conv_push.h): m = (batch item, output position),
// n = filter in the group, k = (kernel position, channel in the group).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nxv/tensor.hpp"
#include "ops/conv/conv_attrs.hpp"

namespace nxv {

struct ConvGeometry {
  size_t spatial = 0;  // spatial axes
  int64_t batch = 0, channels = 0, filters = 0;
  int64_t groups = 1;        // feature groups x batch groups (one of them is 1)
  int64_t ci = 0;            // the kernel's channels: channels per feature group
  int64_t out_batch = 0;     // batch / batch groups
  int64_t group_filters = 0; // filters / groups
  Shape in_spatial, kernel_spatial, out_spatial;
  int64_t positions = 1, kernel_positions = 1;  // products of out_spatial, kernel_spatial
  int64_t m() const { return out_batch * positions; }
  int64_t k() const { return ci * kernel_positions; }
  // The result's shape before the output permutation, and after it.
  Shape canonical_out() const;
};

// The geometry of a conv of `input` by `kernel` (shapes as stored, before the permutations);
// `error` says what Nx would have refused.
// `attrs` are the call's, with Nx's defaults where an option is absent (strides and dilations
// 1, padding 0, identity permutations).
struct ConvPlan {
  ConvGeometry geometry;
  ConvAttrs attrs;
  std::string error;
};
ConvPlan plan_conv(const Shape& input, const Shape& kernel, const ConvAttrs& attrs);

// The result's shape (output permutation applied).
Shape conv_output_shape(const ConvGeometry& g, const ConvAttrs& attrs);

// Whether `perm` is a permutation of 0..rank-1.
bool is_permutation(const std::vector<int64_t>& perm, size_t rank);

// Extent of the input along a spatial axis once dilated: (size - 1) * dilation + 1 (0 if empty).
int64_t dilated_extent(int64_t size, int64_t dilation);

}  // namespace nxv
