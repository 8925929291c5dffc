// Attributes of the window family's ops: the window's extent per axis, its strides, the
// padding (low, high; negative crops) and the window dilations.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace nxv {

struct Combiner;  // ops/reduce/combiner.hpp

struct WindowAttrs {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;    // 1 per axis when absent
  std::vector<int64_t> dilations;  // 1 per axis when absent
  std::vector<std::pair<int64_t, int64_t>> padding;  // (0, 0) per axis when absent
  std::shared_ptr<const Combiner> combiner;           // window_reduce/6: the function, traced
};

}  // namespace nxv
