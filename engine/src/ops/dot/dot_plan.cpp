#include "ops/dot/dot_plan.hpp"

#include <algorithm>

namespace nxv {
namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t product(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t p = 1;
  for (int64_t a : axes) p *= shape[size_t(a)];
  return p;
}

// One group of axes (in reading order) as a single stride, if it collapses.
std::optional<int64_t> collapse(const Shape& shape, const std::vector<int64_t>& strides,
                                 std::vector<int64_t>::const_iterator begin, std::vector<int64_t>::const_iterator end) {
  std::optional<int64_t> inner;  // the stride of the innermost non-trivial axis seen so far
  int64_t inner_extent = 1;      // elements the axes seen so far span, in units of `inner`
  for (auto it = end; it != begin;) {
    --it;
    size_t a = size_t(*it);
    if (shape[a] == 1) continue;
    if (strides[a] < 0) return std::nullopt;
    if (!inner) {
      inner = strides[a];
      inner_extent = shape[a];
    } else {
      if (strides[a] != *inner * inner_extent) return std::nullopt;
      inner_extent *= shape[a];
    }
  }
  return inner.value_or(0);
}

}  // namespace

std::vector<int64_t> free_axes(size_t rank, const std::vector<int64_t>& contract, const std::vector<int64_t>& batch) {
  std::vector<int64_t> f;
  for (int64_t a = 0; a < int64_t(rank); ++a)
    if (!contains(contract, a) && !contains(batch, a)) f.push_back(a);
  return f;
}

OperandAxes left_axes(size_t rank, const DotAttrs& a) {
  OperandAxes x;
  std::vector<int64_t> f = free_axes(rank, a.left_contract, a.left_batch);
  x.order = a.left_batch;
  x.order.insert(x.order.end(), f.begin(), f.end());
  x.order.insert(x.order.end(), a.left_contract.begin(), a.left_contract.end());
  x.batch = a.left_batch.size();
  x.first = f.size();
  return x;
}

OperandAxes right_axes(size_t rank, const DotAttrs& a) {
  OperandAxes x;
  std::vector<int64_t> f = free_axes(rank, a.right_contract, a.right_batch);
  x.order = a.right_batch;
  x.order.insert(x.order.end(), a.right_contract.begin(), a.right_contract.end());
  x.order.insert(x.order.end(), f.begin(), f.end());
  x.batch = a.right_batch.size();
  x.first = a.right_contract.size();
  return x;
}

GemmShape gemm_shape(const Shape& left, const Shape& right, const DotAttrs& a) {
  GemmShape g;
  g.batch = product(left, a.left_batch);
  g.k = product(left, a.left_contract);
  g.m = product(left, free_axes(left.size(), a.left_contract, a.left_batch));
  g.n = product(right, free_axes(right.size(), a.right_contract, a.right_batch));
  return g;
}

std::optional<std::array<int64_t, 3>> collapse_groups(const Shape& shape, const std::vector<int64_t>& strides,
                                                      const OperandAxes& axes) {
  auto b = axes.order.begin();
  auto s1 = b + std::ptrdiff_t(axes.batch), s2 = s1 + std::ptrdiff_t(axes.first), e = axes.order.end();
  auto g0 = collapse(shape, strides, b, s1), g1 = collapse(shape, strides, s1, s2), g2 = collapse(shape, strides, s2, e);
  if (!g0 || !g1 || !g2) return std::nullopt;
  return std::array<int64_t, 3>{*g0, *g1, *g2};
}

int64_t max_element_index(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) {
  int64_t hi = offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return offset;
    if (strides[d] > 0) hi += (shape[d] - 1) * strides[d];
  }
  return hi;
}

}  // namespace nxv
