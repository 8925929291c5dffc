// Helpers shared by the op families' tests: random and scalar tensors, elementwise chain steps
// and bit-for-bit comparison (the epilogue tests), and conv attributes from a case with defaults spelled out.
#pragma once
#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "ops/conv/conv_attrs.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/elementwise/fusion.hpp"
#include "test_util.hpp"

namespace nxv::test {

inline Tensor random_tensor(Device& d, DType t, const Shape& shape, std::mt19937& rng) {
  auto bytes = random_typed_values(t, size_t(shape_size(shape)), rng);
  return from_host(d, t, shape, bytes.data(), bytes.size());
}

// A scalar tensor of `t` holding `v`.
inline Tensor scalar(Device& d, DType t, double v) {
  std::vector<std::byte> b(dtype_size(t));
  if (is_integer(t)) {
    int64_t i = int64_t(v);
    std::memcpy(b.data(), &i, b.size());
  } else {
    store_real(t, v, b.data());
  }
  return from_host(d, t, {}, b.data(), b.size());
}

// Dot's GPU tile on any device, lavapipe included (and no host BLAS, whose steps wait): the
// kernels graphs fuse into on GPUs.
struct GpuDotPaths {
  ScopedTuning gpu{"gpu_paths", "1"};
  ScopedTuning no_blas{"host_blas", "0"};
};

// A matrix product contracting the left operand's axis `left` with the right one's `right`.
inline DotAttrs contracting(int64_t left, int64_t right) {
  DotAttrs d;
  d.left_contract = {left}, d.right_contract = {right};
  return d;
}

inline ChainStep step(OpId op, DType out, std::vector<ChainOperand> operands) {
  return {op, out, std::move(operands)};
}
inline ChainOperand in(uint32_t i) { return {ChainOperand::From::Input, i}; }
inline ChainOperand st(uint32_t i) { return {ChainOperand::From::Step, i}; }

// The chain's steps as ops of their own, one by one over `inputs` (chain input i), each of
// shape `shape`: what a fused chain's bits are compared with. Returns the last step's result.
inline Tensor run_steps_one_by_one(Device& d, const std::vector<Tensor>& inputs, const ElementwiseChain& chain,
                                   const Shape& shape) {
  std::vector<Tensor> results;
  for (const ChainStep& s : chain.steps) {
    std::vector<Tensor> operands;
    for (const auto& o : s.operands)
      operands.push_back(o.from == ChainOperand::From::Input ? inputs[o.index] : results[o.index]);
    results.push_back(run_op(d, s.op, {s.out, shape}, operands, Attrs{}));
  }
  return results.back();
}

// Bit for bit; NaNs need only both be NaN (IEEE leaves a NaN's sign and payload to the
// implementation, and a compiler may order an add's operands differently in one kernel only:
// the rule of fusion_test.cpp).
inline void expect_same_bits(Device& d, const Tensor& want, const Tensor& got) {
  ASSERT_EQ(want.shape, got.shape);
  ASSERT_EQ(want.type, got.type);
  if (want.size() == 0) return;
  auto w = to_host(d, want), g = to_host(d, got);
  size_t e = dtype_size(want.type);
  for (size_t i = 0; i < w.size(); i += e)
    if (std::memcmp(w.data() + i, g.data() + i, e) != 0 &&
        !(is_float(want.type) && std::isnan(typed_value_at(want.type, w.data() + i).real()) &&
          std::isnan(typed_value_at(got.type, g.data() + i).real()))) {
      ADD_FAILURE() << "element " << i / e << " differs from the unfused ops (" << typed_value_at(want.type, w.data() + i)
                    << " unfused, " << typed_value_at(got.type, g.data() + i) << " fused)";
      return;
    }
}

inline std::vector<int64_t> identity(size_t n) {
  std::vector<int64_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = int64_t(i);
  return p;
}

// A conv case's attributes with every option spelled out, as Nx passes them (the case has
// input, strides, padding, idil, kdil, feature_groups, batch_groups and the three permutations;
// empty ones take their defaults).
template <typename Case>
ConvAttrs conv_attrs_of(const Case& c) {
  size_t r = c.input.size() - 2;
  ConvAttrs a;
  a.strides = c.strides.empty() ? std::vector<int64_t>(r, 1) : c.strides;
  a.padding = c.padding.empty() ? std::vector<std::pair<int64_t, int64_t>>(r, {0, 0}) : c.padding;
  a.input_dilation = c.idil.empty() ? std::vector<int64_t>(r, 1) : c.idil;
  a.kernel_dilation = c.kdil.empty() ? std::vector<int64_t>(r, 1) : c.kdil;
  a.feature_group_size = c.feature_groups;
  a.batch_group_size = c.batch_groups;
  a.input_permutation = c.in_perm.empty() ? identity(r + 2) : c.in_perm;
  a.kernel_permutation = c.ker_perm.empty() ? identity(r + 2) : c.ker_perm;
  a.output_permutation = c.out_perm.empty() ? identity(r + 2) : c.out_perm;
  return a;
}

// Stored shape of a canonical shape under `perm` (canonical axis i is stored axis perm[i]).
inline Shape stored_shape(const Shape& canonical, const std::vector<int64_t>& perm) {
  Shape s(canonical.size());
  for (size_t i = 0; i < perm.size(); ++i) s[size_t(perm[i])] = canonical[i];
  return s;
}

}  // namespace nxv::test
