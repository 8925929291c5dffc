// Attributes of the conv op (Nx.Backend conv/4), as Nx passes them: one value per spatial axis
// for strides, padding (low, high; negative crops) and dilations; the group counts; and the
// permutations that bring the input to [batch, channels, spatial...], the kernel to
// [filters, channels per group, spatial...] and that place the result's canonical axes
// [batch, filters, spatial...] (canonical axis j is the output's axis output_permutation[j]).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace nxv {

struct ConvAttrs {
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> input_dilation, kernel_dilation;
  int64_t feature_group_size = 1, batch_group_size = 1;
  std::vector<int64_t> input_permutation, kernel_permutation, output_permutation;
};

}  // namespace nxv
