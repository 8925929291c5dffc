// dot as a batched GEMM: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]. An operand is read in
// place when its batch, free and contracting axes each collapse to one stride; otherwise the
// lowering first copies it to a row-major permutation (inside the same executable).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "nxv/tensor.hpp"
#include "ops/dot/dot_attrs.hpp"

namespace nxv {

struct GemmShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

// An operand's axes in the order the GEMM reads them: batch, then free, then contracting
// (left operand) or batch, contracting, free (right operand). Group sizes give the split.
struct OperandAxes {
  std::vector<int64_t> order;
  size_t batch = 0, first = 0;  // sizes of the first two groups; the third is the rest
};

// The free axes of an operand of rank `rank` (those neither contracted nor batched), in order.
std::vector<int64_t> free_axes(size_t rank, const std::vector<int64_t>& contract, const std::vector<int64_t>& batch);

OperandAxes left_axes(size_t rank, const DotAttrs& a);
OperandAxes right_axes(size_t rank, const DotAttrs& a);

GemmShape gemm_shape(const Shape& left, const Shape& right, const DotAttrs& a);

// The three strides of `shape`/`strides` read in `axes` order, when each group collapses to
// one non-negative stride (size-1 axes are ignored); nullopt otherwise. Returned as
// {first group, second group, third group}.
std::optional<std::array<int64_t, 3>> collapse_groups(const Shape& shape, const std::vector<int64_t>& strides,
                                                      const OperandAxes& axes);

// The largest element index a view reaches (its offset included), for 32-bit addressing.
int64_t max_element_index(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset);

}  // namespace nxv
