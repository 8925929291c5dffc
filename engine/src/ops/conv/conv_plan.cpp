#include "ops/conv/conv_plan.hpp"

#include <algorithm>

namespace nxv {
namespace {

Shape permuted(const Shape& shape, const std::vector<int64_t>& perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = shape[size_t(perm[i])];
  return out;
}

int64_t product(const Shape& s) {
  int64_t p = 1;
  for (int64_t x : s) p *= x;
  return p;
}

}  // namespace

bool is_permutation(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t x : perm) {
    if (x < 0 || x >= int64_t(rank) || seen[size_t(x)]) return false;
    seen[size_t(x)] = true;
  }
  return true;
}

int64_t dilated_extent(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

Shape ConvGeometry::canonical_out() const {
  Shape s{out_batch, filters};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

ConvPlan plan_conv(const Shape& input, const Shape& kernel, const ConvAttrs& attrs) {
  ConvPlan plan;
  auto fail = [&](std::string why) {
    plan.error = std::move(why);
    return plan;
  };
  size_t rank = input.size();
  if (rank < 3 || kernel.size() != rank) return fail("input and kernel need the same rank, at least 3");
  size_t r = rank - 2;
  plan.attrs = attrs;
  ConvAttrs& a = plan.attrs;
  auto identity = [](size_t n) {
    std::vector<int64_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = int64_t(i);
    return p;
  };
  for (auto* v : {&a.strides, &a.input_dilation, &a.kernel_dilation})
    if (v->empty()) v->assign(r, 1);
  if (a.padding.empty()) a.padding.assign(r, {0, 0});
  for (auto* p : {&a.input_permutation, &a.kernel_permutation, &a.output_permutation})
    if (p->empty()) *p = identity(rank);
  if (!is_permutation(a.input_permutation, rank) || !is_permutation(a.kernel_permutation, rank) ||
      !is_permutation(a.output_permutation, rank))
    return fail("the input, kernel and output permutations must be permutations of the axes");
  if (a.strides.size() != r || a.padding.size() != r || a.input_dilation.size() != r || a.kernel_dilation.size() != r)
    return fail("strides, padding and dilations need one value per spatial axis");
  for (size_t d = 0; d < r; ++d)
    if (a.strides[d] < 1 || a.input_dilation[d] < 1 || a.kernel_dilation[d] < 1)
      return fail("strides and dilations must be positive");
  if (a.feature_group_size < 1 || a.batch_group_size < 1) return fail("group sizes must be positive");
  if (a.feature_group_size > 1 && a.batch_group_size > 1) return fail("either batch groups or feature groups must be 1");
  Shape in = permuted(input, a.input_permutation), ker = permuted(kernel, a.kernel_permutation);
  ConvGeometry& g = plan.geometry;
  g.spatial = r;
  g.batch = in[0], g.channels = in[1], g.filters = ker[0], g.ci = ker[1];
  g.groups = a.feature_group_size * a.batch_group_size;
  if (g.channels != g.ci * a.feature_group_size) return fail("input channels must be kernel channels x feature groups");
  if (g.filters % g.groups != 0) return fail("the filters must divide into the groups");
  if (g.batch % a.batch_group_size != 0) return fail("batch groups must divide the batch");
  g.out_batch = g.batch / a.batch_group_size;
  g.group_filters = g.filters / g.groups;
  for (size_t d = 0; d < r; ++d) {
    int64_t size = in[2 + d], k = ker[2 + d];
    int64_t padded = dilated_extent(size, a.input_dilation[d]) + a.padding[d].first + a.padding[d].second;
    int64_t span = dilated_extent(k, a.kernel_dilation[d]);
    g.in_spatial.push_back(size);
    g.kernel_spatial.push_back(k);
    g.out_spatial.push_back(padded < span ? 0 : (padded - span) / a.strides[d] + 1);
  }
  g.positions = product(g.out_spatial);
  g.kernel_positions = product(g.kernel_spatial);
  return plan;
}

Shape conv_output_shape(const ConvGeometry& g, const ConvAttrs& a) {
  // Canonical axis j is the output's axis output_permutation[j].
  Shape canonical = g.canonical_out(), out(canonical.size());
  for (size_t j = 0; j < canonical.size(); ++j) out[size_t(a.output_permutation[j])] = canonical[j];
  return out;
}

}  // namespace nxv
