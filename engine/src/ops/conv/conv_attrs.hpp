// Attributes of the conv op (Nx.Backend conv/4), as Nx passes them: one value per spatial axis
// for strides, padding (low, high; negative crops) and dilations; the group counts; and the
// permutations that bring the input to [batch, channels, spatial...], the kernel to
// [filters, channels per group, spatial...] and that place the result's canonical axes
// [batch, filters, spatial...] (canonical axis j is the output's axis output_permutation[j]).
// An optional epilogue (conv_epilogue.hpp) applies an elementwise chain to each output element
// where it is stored: chain input 0 is the conv's value (of type `product`), inputs 1 and 2 the
// op's third and fourth tensors broadcast to the output; the op's output type is the chain's.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct ConvAttrs {
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> input_dilation, kernel_dilation;
  int64_t feature_group_size = 1, batch_group_size = 1;
  std::vector<int64_t> input_permutation, kernel_permutation, output_permutation;
  std::optional<ElementwiseChain> epilogue;
  DType product = DType::F32;  // with an epilogue: the conv alone's output type
};

}  // namespace nxv
