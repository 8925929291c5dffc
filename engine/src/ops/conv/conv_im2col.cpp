#include "ops/conv/conv_im2col.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "memory/copy.hpp"
#include "ops/conv/conv_host.hpp"
#include "ops/conv/conv_push.h"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_kernels.hpp"

namespace nxv {
namespace {

// Feature or batch groups on CPU drivers: A written by the host as [groups, m, k], one BLAS
// product per group into C [groups, m, n], then C moved into the output, its filter axis seen
// as [groups, filters per group]. False (nothing appended) where BLAS would not take it.
bool append_grouped_host_gemm(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input,
                              const GemmOperand& kernel) {
  const ConvGeometry& g = plan.geometry;
  const Tensor& t = a.inputs[0].tensor;
  DType type = a.out.type;
  const DeviceCore& core = *a.device.impl().core;
  GemmShape shape{g.groups, g.m(), g.group_filters, g.k()};
  if (!host_gemm_candidate(a.device, type, shape, t.type, kernel.type)) return false;
  uint64_t a_elements = uint64_t(g.groups) * uint64_t(g.m()) * uint64_t(g.k());
  uint64_t c_elements = uint64_t(g.groups) * uint64_t(g.m()) * uint64_t(g.group_filters);
  size_t elem = dtype_size(type);
  if (a_elements >= (uint64_t(1) << 31) || a_elements * elem > core.chunk_bytes() || c_elements * elem > core.chunk_bytes())
    return false;
  Tensor a_buffer = empty(a.device, t.type, {g.groups, g.m(), g.k()});
  if (!conv_host_im2col_fits(a.builder, plan, input, t.type, *a_buffer.buffer)) return false;
  Tensor c_buffer = empty(a.device, type, {g.groups, g.m(), g.group_filters});
  uint32_t a_slot = a.builder.bind(a_buffer.buffer), c_slot = a.builder.bind(c_buffer.buffer);
  append_conv_host_im2col(a.builder, plan, input, t.type, {a_slot, 0});
  GemmOperand a_mat{{a_slot, 0}, t.type, {g.m() * g.k(), g.k(), 1}};
  if (!append_host_gemm(a.device, a.builder, type, shape, a_mat, kernel, {c_slot, 0}))
    append_gemm(a.device.impl(), a.builder, type, shape, a_mat, kernel, {c_slot, 0});
  // The output with its filter axis split in two, and C read that way: canonical axis j at
  // output axis output_permutation[j] (one further on past the split).
  int64_t n = g.group_filters;
  size_t split_at = size_t(plan.attrs.output_permutation[1]);
  Shape split = a.out.shape;
  split[split_at] = n;
  split.insert(split.begin() + int64_t(split_at), g.groups);
  Tensor dst = a.output;
  dst.shape = split;
  dst.strides = row_major_strides(split);
  Tensor src = c_buffer;
  src.shape = split;
  src.strides.assign(split.size(), 0);
  src.strides[split_at] = g.m() * n;  // group
  src.strides[split_at + 1] = 1;      // filter in the group
  auto place = [&](size_t canonical_axis) {
    size_t axis = size_t(plan.attrs.output_permutation[canonical_axis]);
    return axis > split_at ? axis + 1 : axis;
  };
  src.strides[place(0)] = g.positions * n;
  for (size_t d = 0; d < g.spatial; ++d) {
    int64_t inner = n;
    for (size_t e = d + 1; e < g.spatial; ++e) inner *= g.out_spatial[e];
    src.strides[place(2 + d)] = inner;
  }
  append_copy(a.device, a.builder, src, c_slot, dst, a.output_slot);
  return true;
}

}  // namespace

bool append_conv_im2col_gemm(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input,
                             const GemmOperand& kernel, const StoreEpilogue* epi) {
  if (tuning().conv.no_im2col) return false;
  const ConvGeometry& g = plan.geometry;
  const Tensor& t = a.inputs[0].tensor;
  const auto& attrs = a.attrs.as<ConvAttrs>();
  DeviceImpl& impl = a.device.impl();
  const DeviceCore& core = *impl.core;
  if (a.output.size() == 0 || g.k() == 0 || t.size() == 0) return false;
  if (g.groups != 1) return !epi && append_grouped_host_gemm(a, plan, input, kernel);
  // The product's type: the output's, or with an epilogue the type the chain starts from.
  DType product_type = epi ? epi->product : a.out.type;
  uint64_t a_elements = uint64_t(g.m()) * uint64_t(g.k());
  uint64_t c_elements = uint64_t(g.m()) * uint64_t(g.group_filters);
  if (a_elements >= (uint64_t(1) << 31) || uint64_t(t.size()) >= (uint64_t(1) << 31) ||
      c_elements * dtype_size(product_type) > core.chunk_bytes())
    return false;
  GemmShape shape{1, g.m(), g.group_filters, g.k()};
  GemmOperand a_mat{{0, 0}, t.type, {g.m() * g.k(), g.k(), 1}};
  auto coopmat = coopmat_gemm_tile(core, shape, a_mat, kernel, product_type);
  // CPU drivers: A written out, then the system's BLAS (dot_host.hpp) multiplies it.
  bool blas = !coopmat && !epi && host_gemm_candidate(a.device, product_type, shape, t.type, kernel.type);
  if (!coopmat && !blas && !tuning().conv.im2col) return false;

  // CPU drivers: the host writes A from the input as it is (conv_host.hpp).
  std::optional<Tensor> host_a;
  if (blas && a_elements * dtype_size(t.type) <= core.chunk_bytes()) {
    host_a = empty(a.device, t.type, {g.m(), g.k()});
    if (!conv_host_im2col_fits(a.builder, plan, input, t.type, *host_a->buffer)) host_a.reset();
  }
  // Channels adjacent, so that A's rows are gathered (and written) along k: a channels-last
  // copy where they are not. Decided before anything is appended, so that a refusal appends
  // nothing.
  ConvInput in = input;
  std::optional<Tensor> channels_last, copy;
  if (!host_a && input.strides[1] != 1 && g.ci > 1) {
    Tensor view = transpose_view(t, plan.attrs.input_permutation);  // [batch, channels, spatial...]
    std::vector<int64_t> last(view.shape.size());
    std::iota(last.begin(), last.end(), int64_t(0));
    last.erase(last.begin() + 1);
    last.push_back(1);
    channels_last = transpose_view(view, last);
    copy = empty(a.device, t.type, channels_last->shape);
    in.ref = {0, 0};
    in.strides = {copy->strides[0], 1};
    for (size_t d = 0; d < g.spatial; ++d) in.strides.push_back(copy->strides[1 + d]);
  }
  // The cooperative-matrix GEMM gathers A itself where it can: no temporary.
  // (Its workgroup must span whole rows of the A tile's 8-element chunks.)
  bool implicit = coopmat && conv_gather16_vector(g, in) == 8 &&
                  (coopmat->subgroups() * coopmat->subgroup) % (coopmat->bk / 8) == 0 &&
                  !tuning().conv.no_implicit;
  if (!implicit && (epi || a_elements * dtype_size(t.type) > core.chunk_bytes())) return false;
  if (copy) {
    uint32_t slot = a.builder.bind(copy->buffer);
    append_copy(a.device, a.builder, *channels_last, a.inputs[0].slot, *copy, slot);
    in.ref = {slot, 0};
  }
  if (implicit) {
    // Straight into the output: its canonical axes' strides (axis j at output_permutation[j]).
    std::vector<int64_t> os = row_major_strides(a.out.shape), out_strides;
    for (int64_t axis : plan.attrs.output_permutation) out_strides.push_back(os[size_t(axis)]);
    bool idil = std::any_of(attrs.input_dilation.begin(), attrs.input_dilation.end(), [](int64_t x) { return x > 1; });
    CoopmatGatheredA gathered{in.ref, conv_params(plan, in, out_strides, epi), uint32_t(g.spatial), idil,
                              out_strides[1] != 1, epi};
    if (epi)  // the chain's tensors' addresses, inside the parameter block
      for (AddressPatch patch : epi->patches) {
        patch.offset += uint32_t(offsetof(ConvParams, epi));
        gathered.patches.push_back(patch);
      }
    append_gemm_coopmat(impl, a.builder, product_type, shape, a_mat, kernel, {a.output_slot, 0}, *coopmat, &gathered);
    return true;
  }
  Tensor a_buffer = host_a ? *host_a : empty(a.device, t.type, {g.m(), g.k()});
  uint32_t a_slot = a.builder.bind(a_buffer.buffer);
  if (host_a) append_conv_host_im2col(a.builder, plan, input, t.type, {a_slot, 0});
  else append_conv_im2col(impl, a.builder, plan, in, {a_slot, 0});
  a_mat.ref = {a_slot, 0};
  auto multiply = [&](const GemmShape& s, const GemmOperand& x, const GemmOperand& y, BufferRef c) {
    if (!blas || !append_host_gemm(a.device, a.builder, product_type, s, x, y, c))
      append_gemm(impl, a.builder, product_type, s, x, y, c);
  };
  // BLAS stores straight into a dense channels-last output (C is its [m, n]) or channels-first
  // one (per batch item, kernel^T x A^T: [filters, positions]).
  std::vector<int64_t> os = row_major_strides(a.out.shape), out_strides;
  for (int64_t axis : plan.attrs.output_permutation) out_strides.push_back(os[size_t(axis)]);
  auto spatial_dense = [&](int64_t unit) {
    for (size_t d = g.spatial; d-- > 0; unit *= g.out_spatial[d])
      if (out_strides[2 + d] != unit) return false;
    return true;
  };
  int64_t n = g.group_filters, positions = g.positions;
  if (blas && out_strides[1] == 1 && spatial_dense(n) && out_strides[0] == positions * n) {
    multiply(shape, a_mat, kernel, {a.output_slot, 0});
    return true;
  }
  if (blas && out_strides[1] == positions && spatial_dense(1) && out_strides[0] == n * positions) {
    GemmShape per_item{g.out_batch, n, positions, g.k()};
    GemmOperand w{kernel.ref, kernel.type, {0, kernel.strides[2], kernel.strides[1]}};
    GemmOperand x{a_mat.ref, a_mat.type, {positions * g.k(), 1, g.k()}};
    multiply(per_item, w, x, {a.output_slot, 0});
    return true;
  }
  Tensor c_buffer = empty(a.device, a.out.type, {g.m(), g.group_filters});
  uint32_t c_slot = a.builder.bind(c_buffer.buffer);
  multiply(shape, a_mat, kernel, {c_slot, 0});

  // C [batch item x output position, filter] read as the canonical result [batch, filters,
  // spatial...], each canonical axis j at the output's axis output_permutation[j].
  std::vector<int64_t> canonical{g.positions * g.group_filters, 1};
  for (size_t d = 0; d < g.spatial; ++d) {
    int64_t inner = g.group_filters;
    for (size_t e = d + 1; e < g.spatial; ++e) inner *= g.out_spatial[e];
    canonical.push_back(inner);
  }
  Tensor product = c_buffer;
  product.shape = a.out.shape;
  product.strides.assign(a.out.shape.size(), 0);
  for (size_t j = 0; j < canonical.size(); ++j) product.strides[size_t(plan.attrs.output_permutation[j])] = canonical[j];
  append_copy(a.device, a.builder, product, c_slot, a.output, a.output_slot);
  return true;
}

}  // namespace nxv
