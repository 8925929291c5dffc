#include "ops/conv/conv_host.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/dot/dot_host.hpp"

namespace nxv {
namespace {

// Bytes the canonical input view spans from its start.
uint64_t input_span(const ConvGeometry& g, const ConvInput& in, size_t elem) {
  int64_t last = (g.batch - 1) * in.strides[0] + (g.channels - 1) * in.strides[1];
  for (size_t d = 0; d < g.spatial; ++d) last += (g.in_spatial[d] - 1) * in.strides[2 + d];
  return uint64_t(last + 1) * elem;
}

// A's rows, element type T, group after group: per row (batch item, output position), per
// kernel position, the ci channels, or zeros where the position falls outside the input or
// between the elements of a dilated one.
template <typename T>
void write_rows(const ConvGeometry& g, const ConvAttrs& at, const std::vector<int64_t>& strides, const T* in, T* a) {
  size_t r = g.spatial;
  // Per kernel position, its offset along each axis in the dilated input.
  std::vector<int64_t> kernel_at(size_t(g.kernel_positions) * r);
  for (int64_t q = 0; q < g.kernel_positions; ++q)
    for (int64_t d = int64_t(r) - 1, rest = q; d >= 0; --d) {
      kernel_at[size_t(q) * r + size_t(d)] = (rest % g.kernel_spatial[size_t(d)]) * at.kernel_dilation[size_t(d)];
      rest /= g.kernel_spatial[size_t(d)];
    }
  std::vector<int64_t> corner(r), extent(r);
  for (size_t d = 0; d < r; ++d) extent[d] = dilated_extent(g.in_spatial[d], at.input_dilation[d]);
  const int64_t ci = g.ci, in_c = strides[1];
  // Group `group` reads batch items group * out_batch.. (batch groups) or channels group * ci..
  // (feature groups); its rows follow the previous group's.
  const int64_t in_group = at.batch_group_size > 1 ? g.out_batch * strides[0] : ci * in_c;
  T* out = a;
  for (int64_t group = 0; group < g.groups; ++group, in += in_group) {
    for (int64_t m = 0; m < g.m(); ++m) {
      int64_t item = m / g.positions, p = m % g.positions;
      for (int64_t d = int64_t(r) - 1; d >= 0; --d) {
        corner[size_t(d)] = (p % g.out_spatial[size_t(d)]) * at.strides[size_t(d)] - at.padding[size_t(d)].first;
        p /= g.out_spatial[size_t(d)];
      }
      for (int64_t q = 0; q < g.kernel_positions; ++q, out += ci) {
        int64_t off = item * strides[0];
        bool inside = true;
        for (size_t d = 0; d < r && inside; ++d) {
          int64_t x = corner[d] + kernel_at[size_t(q) * r + d], dil = at.input_dilation[d];
          inside = x >= 0 && x < extent[d] && x % dil == 0;
          off += (x / dil) * strides[2 + d];
        }
        if (!inside) std::fill(out, out + ci, T(0));
        else if (in_c == 1) std::copy(in + off, in + off + ci, out);
        else
          for (int64_t c = 0; c < ci; ++c) out[c] = in[off + c * in_c];
      }
    }
  }
}

}  // namespace

bool conv_host_im2col_fits(const LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input, DType type,
                           const Buffer& a) {
  const ConvGeometry& g = plan.geometry;
  size_t elem = dtype_size(type);
  if ((elem != 4 && elem != 8) || g.batch == 0 || g.channels == 0) return false;
  if (std::any_of(input.strides.begin(), input.strides.end(), [](int64_t s) { return s < 0; })) return false;
  return host_reachable(builder.buffer(input.ref.slot), input.ref, input_span(g, input, elem)) &&
         host_reachable(a, {0, 0}, uint64_t(g.groups) * uint64_t(g.m()) * uint64_t(g.k()) * elem);
}

void append_conv_host_im2col(LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input, DType type,
                             BufferRef a_out) {
  ConvGeometry g = plan.geometry;
  ConvAttrs at = plan.attrs;
  std::vector<int64_t> strides = input.strides;
  BufferRef in_ref = input.ref;
  size_t elem = dtype_size(type);
  Launch& l = builder.host_step([=](std::span<const std::shared_ptr<Buffer>> buffers) {
    const std::byte* in = host_address(*buffers[in_ref.slot], in_ref);
    std::byte* a = host_address(*buffers[a_out.slot], a_out);
    // Copied by bits: 4- and 8-byte elements as integers of their size.
    if (elem == 4)
      write_rows(g, at, strides, reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(a));
    else
      write_rows(g, at, strides, reinterpret_cast<const uint64_t*>(in), reinterpret_cast<uint64_t*>(a));
  });
  builder.use(l, in_ref.slot, Access::Read);
  builder.use(l, a_out.slot, Access::Write);
}

}  // namespace nxv
