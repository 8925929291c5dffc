#include "exec/linear_plan.hpp"

#include <algorithm>

#include "device/device_core.hpp"
#include "nxv/error.hpp"

namespace nxv {
namespace {

bool is_scalar_view(const Tensor& v) {
  return std::all_of(v.strides.begin(), v.strides.end(), [](int64_t s) { return s == 0; }) || v.size() == 1;
}

uint64_t elements_left_in_chunk(const Tensor& t, uint64_t element) {
  uint64_t e = dtype_size(t.type);
  return t.buffer->bytes_left_in_chunk((uint64_t(t.offset) + element) * e) / e;
}

BufferRef ref_of(const Tensor& t, uint32_t slot, uint64_t element) {
  return {slot, (uint64_t(t.offset) + element) * dtype_size(t.type)};
}

struct Collapsed {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;  // per input
};

Collapsed collapse(const Tensor& out, const std::vector<Tensor>& views) {
  Collapsed c;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    if (out.shape[d] == 1) continue;
    bool merge = !c.shape.empty();
    for (size_t i = 0; merge && i < views.size(); ++i)
      merge = c.strides[i].back() == views[i].strides[d] * out.shape[d];
    if (c.strides.empty()) c.strides.resize(views.size());
    if (merge) {
      c.shape.back() *= out.shape[d];
      for (size_t i = 0; i < views.size(); ++i) c.strides[i].back() = views[i].strides[d];
    } else {
      c.shape.push_back(out.shape[d]);
      for (size_t i = 0; i < views.size(); ++i) c.strides[i].push_back(views[i].strides[d]);
    }
  }
  if (c.strides.empty()) c.strides.resize(views.size());
  return c;
}

void check_strided_reach(const Tensor& v) {
  int64_t span = 0;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.strides[d] < 0) throw Error(ErrorKind::Unsupported, "negative strides are not supported by this kernel");
    span += (v.shape[d] - 1) * v.strides[d];
  }
  uint64_t e = dtype_size(v.type);
  uint64_t first = uint64_t(v.offset) * e, last = (uint64_t(v.offset) + uint64_t(span)) * e;
  if (span >= (int64_t(1) << 31) || first / v.buffer->chunk_bytes() != last / v.buffer->chunk_bytes())
    throw Error(ErrorKind::Unsupported,
                "a strided view spanning more than one device buffer chunk or 2^31 elements is not supported");
}

}  // namespace

bool all_dense(const std::vector<Tensor>& views) {
  for (const auto& v : views)
    if (!is_scalar_view(v) && !v.is_contiguous()) return false;
  return true;
}

uint32_t workgroups_for(const DeviceCore& core, uint64_t n, uint32_t wg, uint32_t max_workgroups) {
  uint64_t groups = (n + wg - 1) / wg;
  uint64_t cap = std::min<uint64_t>(core.info().max_workgroup_count[0], 65535);
  // CPU drivers (lavapipe) pay per workgroup: a few workgroups looping over the elements beat
  // one per 256 elements (add of 1M f32: 1.8 ms with 32 against 10 ms uncapped, 2 cores).
  if (core.profile().cpu_driver) cap = std::min<uint64_t>(cap, 32);
  if (max_workgroups) cap = std::min<uint64_t>(cap, max_workgroups);
  return uint32_t(std::max<uint64_t>(1, std::min(groups, cap)));
}

uint32_t linear_workgroup_size(const DeviceCore& core, uint64_t invocations, uint32_t preferred) {
  return cpu_paths(core.profile()) && invocations <= kSmallWorkgroup && preferred > kSmallWorkgroup ? kSmallWorkgroup
                                                                                                     : preferred;
}

bool strided_runs(const DeviceCore& core) { return cpu_paths(core.profile()); }

void plan_linear(const Tensor& out, uint32_t out_slot, const std::vector<Tensor>& views,
                 const std::vector<uint32_t>& in_slots, bool dense, size_t max_rank,
                 const std::function<void(const PlannedRange&)>& emit) {
  max_rank = std::min<size_t>(max_rank, kMaxPlanRank);
  const uint64_t total = uint64_t(out.size());
  if (total == 0) return;
  if (views.size() > 3) throw Error(ErrorKind::InvalidArgument, "elementwise kernels take at most three inputs");

  if (dense) {
    std::vector<bool> scalar;
    for (const auto& v : views) scalar.push_back(is_scalar_view(v) && !(v.is_contiguous() && v.size() == int64_t(total) && total > 1));
    for (uint64_t s = 0; s < total;) {
      uint64_t len = std::min<uint64_t>(total - s, kMaxDispatchElements);
      len = std::min(len, elements_left_in_chunk(out, s));
      for (size_t i = 0; i < views.size(); ++i)
        if (!scalar[i]) len = std::min(len, elements_left_in_chunk(views[i], s));
      PlannedRange p;
      p.out = ref_of(out, out_slot, s);
      for (size_t i = 0; i < views.size(); ++i) {
        p.in[i] = ref_of(views[i], in_slots[i], scalar[i] ? 0 : s);
        p.stride[i][0] = scalar[i] ? 0 : 1;
      }
      p.n = uint32_t(len);
      emit(p);
      s += len;
    }
    return;
  }

  // Inputs laid out like the output are indexed by the output position (and may span chunks);
  // the others must be reachable with 32-bit offsets inside one chunk.
  std::vector<bool> like_out;
  for (const auto& v : views) {
    like_out.push_back(v.is_contiguous() && !is_scalar_view(v));
    if (!like_out.back()) check_strided_reach(v);
  }
  Collapsed c = collapse(out, views);
  size_t rank = c.shape.size();
  size_t outer = rank > max_rank ? rank - max_rank : 0;
  uint64_t block = 1;
  for (size_t d = outer; d < rank; ++d) block *= uint64_t(c.shape[d]);
  if (block >= (1ull << 32)) throw Error(ErrorKind::Unsupported, "strided operation over 2^32 elements per block");
  uint64_t blocks = total / block;
  std::vector<int64_t> outer_index(outer, 0);
  for (uint64_t b = 0; b < blocks; ++b) {
    std::vector<int64_t> base(views.size(), 0);
    for (size_t i = 0; i < views.size(); ++i)
      for (size_t d = 0; d < outer; ++d) base[i] += outer_index[d] * c.strides[i][d];
    for (uint64_t s = 0; s < block;) {
      uint64_t len = std::min<uint64_t>(block - s, kMaxDispatchElements);
      len = std::min(len, elements_left_in_chunk(out, b * block + s));
      for (size_t i = 0; i < views.size(); ++i)
        if (like_out[i]) len = std::min(len, elements_left_in_chunk(views[i], b * block + s));
      PlannedRange p;
      p.out = ref_of(out, out_slot, b * block + s);
      p.rank = uint32_t(rank - outer);
      p.start = uint32_t(s);
      for (size_t d = outer; d < rank; ++d) {
        p.shape[d - outer] = uint32_t(c.shape[d]);
        for (size_t i = 0; i < views.size(); ++i) p.stride[i][d - outer] = uint32_t(c.strides[i][d]);
      }
      for (size_t i = 0; i < views.size(); ++i) {
        p.in[i] = ref_of(views[i], in_slots[i], like_out[i] ? b * block + s : uint64_t(base[i]));
        if (like_out[i]) p.dense |= 1u << i;
      }
      p.n = uint32_t(len);
      emit(p);
      s += len;
    }
    for (size_t d = outer; d-- > 0;) {  // odometer over the outer axes
      if (++outer_index[d] < c.shape[d]) break;
      outer_index[d] = 0;
    }
  }
}

}  // namespace nxv
