// Attributes of the dot op (Nx.Backend dot/7): the contracting and batch axes of each operand.
// Output axes: the batch axes, then the left operand's free axes in order, then the right's.
// An optional epilogue (ops/dot/dot_epilogue.hpp) applies an elementwise chain to each product
// where it is stored: chain input 0 is the product (of type `product`), inputs 1 and 2 the
// op's third and fourth tensors broadcast to the output; the op's output type is the chain's.
// Optional operand prologues (ops/dot/dot_prologue.hpp) apply a one-input elementwise chain of
// the operand's own type to each of its values where the kernels load it: the product of
// relu(z) and W reads z.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct DotAttrs {
  std::vector<int64_t> left_contract, left_batch;
  std::vector<int64_t> right_contract, right_batch;
  std::optional<ElementwiseChain> epilogue;
  std::array<std::optional<ElementwiseChain>, 2> prologue;  // of the left and the right operand
  DType product = DType::F32;  // with an epilogue: the product's type (the dot alone's output type)
};

}  // namespace nxv
