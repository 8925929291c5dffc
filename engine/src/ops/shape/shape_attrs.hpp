// Attributes of the shape family's ops, one struct for all (each op reads its own fields).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "nxv/attrs.hpp"

namespace nxv {

struct PadAxis {
  int64_t low = 0, high = 0, interior = 0;  // low/high may be negative (cropping)
};

struct ShapeAttrs {
  std::vector<int64_t> axes;     // squeeze, transpose, reverse; broadcast: input axis -> output axis
  std::vector<int64_t> starts;   // slice, put_slice
  // slice, put_slice: axes whose start is a tensor input (one scalar each, after the data
  // inputs, in this order); their entries in `starts` are unused
  std::vector<int64_t> dynamic_axes;
  std::vector<int64_t> lengths;  // slice
  std::vector<int64_t> steps;    // slice
  std::vector<PadAxis> padding;  // pad
  std::optional<int64_t> axis;   // concatenate, stack; iota (none: the flattened index)
  AttrNumber value;              // constant
};

}  // namespace nxv
