// Attributes of the dot op (Nx.Backend dot/7): the contracting and batch axes of each operand.
// Output axes: the batch axes, then the left operand's free axes in order, then the right's.
// An optional epilogue (ops/dot/dot_epilogue.hpp) applies an elementwise chain to each product
// where it is stored: chain input 0 is the product (of type `product`), inputs 1 and 2 the
// op's third and fourth tensors broadcast to the output; the op's output type is the chain's.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct DotAttrs {
  std::vector<int64_t> left_contract, left_batch;
  std::vector<int64_t> right_contract, right_batch;
  std::optional<ElementwiseChain> epilogue;
  DType product = DType::F32;  // with an epilogue: the product's type (the dot alone's output type)
};

}  // namespace nxv
