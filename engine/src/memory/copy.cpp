// Making a view contiguous: a bit copy below every op family (transfers and families use it).
#include <algorithm>

#include "common/errors.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_words.hpp"
#include "memory/glsl/copy_push.h"
#include "memory/copy.hpp"
#include "memory/transfer.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;


// A variant of strided_copy.comp: words of one element's size.
struct CopyVariant {
  static constexpr const char* kTemplate = "strided_copy";
  uint8_t bytes = 4;       // 1, 2, 4, 8 or 16
  bool dense = false;      // the source is row-major
  bool out_strided = false;
  bool runs = false;       // a strided source read in runs of kStridedRun elements (CPU drivers)
  uint32_t workgroup = kWorkgroupSize;

  auto fields() const { return std::tie(bytes, dense, out_strided, runs, workgroup); }

  KernelKey source() const {
    KernelKey key{.name = kTemplate, .workgroup_size = workgroup};
    key.defines = {{"ELEM", glsl_word_type(bytes)},
                   {"ELEM_BYTES", std::to_string(bytes)},
                   {"ELEM_ALIGN", std::to_string(std::min<size_t>(bytes, 16))},
                   {"OUT_STRIDED", out_strided ? "1" : "0"}};
    // Defined only where set: the GPU's SPIR-V stays as it was.
    if (runs) key.defines.emplace_back("RUN", std::to_string(kStridedRun) + "u");
    return key;
  }

  static std::vector<CopyVariant> declared(const DeviceInfo&) {
    std::vector<CopyVariant> all;
    for (uint8_t bytes : {1, 2, 4, 8, 16})
      for (uint32_t workgroup : {kWorkgroupSize, kSmallWorkgroup}) {
        all.push_back({bytes, true, false, false, workgroup});
        all.push_back({bytes, true, true, false, workgroup});
        for (bool runs : {false, true}) {
          all.push_back({bytes, false, false, runs, workgroup});
          all.push_back({bytes, false, true, runs, workgroup});
        }
      }
    return all;
  }
};

const Kernel& copy_kernel(Device& device, DType type, bool dense, bool out_strided, uint64_t elements) {
  const DeviceCore& core = *device.impl().core;
  bool runs = !dense && strided_runs(core);
  CopyVariant v{uint8_t(dtype_size(type)), dense, out_strided, runs,
                linear_workgroup_size(core, elements, kWorkgroupSize)};
  return device.impl().kernels.get(v);
}

// The copy moves words of the element's size: only 8- and 16-bit storage matter.
FeatureSet copy_features(DType t) {
  FeatureSet f;
  if (dtype_size(t) == 1) f.add_type(DType::U8);
  if (dtype_size(t) == 2) f.add_type(DType::U16);
  return f;
}

// The first element of a view in its buffer, and the last one it reaches, in elements.
std::pair<int64_t, int64_t> reach(const Tensor& v) {
  int64_t last = v.offset;
  for (size_t d = 0; d < v.shape.size(); ++d) {
    if (v.strides[d] < 0) throw Error(ErrorKind::Unsupported, "negative strides are not supported by the copy kernel");
    last += (v.shape[d] - 1) * v.strides[d];
  }
  return {v.offset, last};
}

void check_reach(const Tensor& v) {
  auto [first, last] = reach(v);
  uint64_t e = dtype_size(v.type), chunk = v.buffer->chunk_bytes();
  if (last - first >= (int64_t(1) << 31) || uint64_t(first) * e / chunk != uint64_t(last) * e / chunk)
    throw Error(ErrorKind::Unsupported,
                "a strided copy spanning more than one device buffer chunk or 2^31 elements is not supported");
}

}  // namespace

void declare_copy_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<CopyVariant>(out, info);
}

void append_copy(Device& device, LaunchBuilder& builder, const Tensor& t, uint32_t in_slot, const Tensor& out,
                 uint32_t out_slot, Access out_access) {
  copy_features(t.type).check(*device.impl().core, "copy");
  if (out.size() == 0) return;
  // Dense copies move 16-byte words where both sides allow (C128 stands for any 16 bytes).
  size_t e = dtype_size(t.type);
  uint64_t total_bytes = uint64_t(out.size()) * e;
  if (e < 16 && t.is_contiguous() && t.size() == out.size() && total_bytes % 16 == 0 &&
      uint64_t(t.offset) * e % 16 == 0 && uint64_t(out.offset) * e % 16 == 0) {
    Tensor wide_in = t, wide_out = out;
    wide_in.type = wide_out.type = DType::C128;
    wide_in.shape = wide_out.shape = {int64_t(total_bytes / 16)};
    wide_in.strides = wide_out.strides = {1};
    wide_in.offset = int64_t(uint64_t(t.offset) * e / 16);
    wide_out.offset = int64_t(uint64_t(out.offset) * e / 16);
    return append_copy(device, builder, wide_in, in_slot, wide_out, out_slot, out_access);
  }
  std::vector<Tensor> views{t};
  bool dense = all_dense(views);
  auto& impl = device.impl();
  const Kernel& kernel = copy_kernel(device, t.type, dense, false, uint64_t(out.size()));
  plan_linear(out, out_slot, views, {in_slot}, dense, NXV_COPY_MAX_RANK, [&](const PlannedRange& p) {
    CopyPush push{};
    push.n = p.n, push.rank = p.rank, push.start = p.start;
    for (int d = 0; d < NXV_COPY_MAX_RANK; ++d) push.shape[d] = p.shape[d], push.stride[d] = p.stride[0][d];
    // Dense launches read element i * stride[0] (1, or 0 for a broadcast scalar); a strided
    // launch whose input is laid out like the output reads element i.
    if (!dense && (p.dense & 1u)) push.stride[0] = 1;
    push.dense = dense || (p.dense & 1u) ? 1u : 0u;
    std::array<uint32_t, 3> grid{workgroups_for(*impl.core, p.n, kernel.workgroup_size), 1, 1};
    Launch& l = builder.launch(kernel, grid, push,
                               {{offsetof(CopyPush, out_addr), p.out}, {offsetof(CopyPush, in_addr), p.in[0]}});
    builder.use(l, in_slot, Access::Read);
    builder.use(l, out_slot, out_access);
  });
}

void append_copy_between(Device& device, LaunchBuilder& builder, const Tensor& src, uint32_t src_slot,
                         const Tensor& dst, uint32_t dst_slot, Access dst_access) {
  if (src.type != dst.type && dtype_size(src.type) != dtype_size(dst.type))
    throw Error(ErrorKind::InvalidArgument, "a bit copy between types of different sizes");
  if (src.shape != dst.shape) throw Error(ErrorKind::InvalidArgument, "a copy between views of different shapes");
  copy_features(src.type).check(*device.impl().core, "copy");
  if (dst.size() == 0) return;
  if (dst.is_contiguous()) {
    Tensor out = dst;
    out.strides = row_major_strides(dst.shape);
    return append_copy(device, builder, src, src_slot, out, dst_slot, dst_access);
  }
  check_reach(src);
  check_reach(dst);
  // Axes of size 1 dropped; neighbours merged where both views step through them alike.
  std::vector<int64_t> shape, in_stride, out_stride;
  for (size_t d = 0; d < dst.shape.size(); ++d) {
    if (dst.shape[d] == 1) continue;
    if (!shape.empty() && in_stride.back() == src.strides[d] * dst.shape[d] &&
        out_stride.back() == dst.strides[d] * dst.shape[d]) {
      shape.back() *= dst.shape[d];
      in_stride.back() = src.strides[d];
      out_stride.back() = dst.strides[d];
      continue;
    }
    shape.push_back(dst.shape[d]);
    in_stride.push_back(src.strides[d]);
    out_stride.push_back(dst.strides[d]);
  }
  size_t rank = shape.size(), outer = rank > NXV_COPY_MAX_RANK ? rank - NXV_COPY_MAX_RANK : 0;
  uint64_t block = 1;
  for (size_t d = outer; d < rank; ++d) block *= uint64_t(shape[d]);
  if (block >= (uint64_t(1) << 32)) throw Error(ErrorKind::Unsupported, "a strided copy over 2^32 elements per block");
  const Kernel& kernel = copy_kernel(device, src.type, false, true, block);
  uint64_t e = dtype_size(src.type);
  std::vector<int64_t> index(outer, 0);
  for (uint64_t b = 0, blocks = uint64_t(dst.size()) / block; b < blocks; ++b) {
    int64_t in_base = src.offset, out_base = dst.offset;
    for (size_t d = 0; d < outer; ++d) in_base += index[d] * in_stride[d], out_base += index[d] * out_stride[d];
    CopyPush push{};
    push.n = uint32_t(block), push.rank = uint32_t(rank - outer), push.start = 0, push.dense = 0;
    for (size_t d = outer; d < rank; ++d) {
      push.shape[d - outer] = uint32_t(shape[d]);
      push.stride[d - outer] = uint32_t(in_stride[d]);
      push.out_stride[d - outer] = uint32_t(out_stride[d]);
    }
    std::array<uint32_t, 3> grid{workgroups_for(*device.impl().core, block, kernel.workgroup_size), 1, 1};
    Launch& l = builder.launch(kernel, grid, push,
                               {{offsetof(CopyPush, out_addr), {dst_slot, uint64_t(out_base) * e}},
                                {offsetof(CopyPush, in_addr), {src_slot, uint64_t(in_base) * e}}});
    builder.use(l, src_slot, Access::Read);
    builder.use(l, dst_slot, dst_access);
    for (size_t d = outer; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

Tensor contiguous(Device& device, const Tensor& t) {
  if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
  if (t.is_contiguous() && t.offset == 0) return t;
  Tensor out = empty(device, t.type, t.shape);
  if (out.size() == 0) return out;
  LaunchBuilder builder;
  uint32_t in_slot = builder.bind(t.buffer), out_slot = builder.bind(out.buffer);
  append_copy(device, builder, t, in_slot, out, out_slot);
  auto& impl = device.impl();
  auto buffers = builder.buffers();
  std::move(builder).finish().run(impl.stream, impl.kernels.layout(), buffers);
  return out;
}

}  // namespace nxv
