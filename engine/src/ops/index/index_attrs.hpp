// Attributes of the index family: gather's and indexed_add/put's `axes` (the axes the index
// rows address; all leading axes when absent), take's and take_along_axis' `axis`.
#pragma once
#include <cstdint>
#include <vector>

namespace nxv {

struct IndexAttrs {
  std::vector<int64_t> axes;
  int64_t axis = 0;
};

}  // namespace nxv
