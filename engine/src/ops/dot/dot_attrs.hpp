// Attributes of the dot op (Nx.Backend dot/7): the contracting and batch axes of each operand.
// Output axes: the batch axes, then the left operand's free axes in order, then the right's.
#pragma once
#include <cstdint>
#include <vector>

namespace nxv {

struct DotAttrs {
  std::vector<int64_t> left_contract, left_batch;
  std::vector<int64_t> right_contract, right_batch;
};

}  // namespace nxv
