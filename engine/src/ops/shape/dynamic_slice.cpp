// slice and put_slice whose start indices are tensors (one scalar per dynamic axis, after the
// op's data inputs): dynamic_slice.comp reads and clamps them on the device, so recording the
// op never waits for the starts. Static starts are clamped here.
#include <algorithm>
#include <bit>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_words.hpp"
#include "memory/copy.hpp"
#include "ops/shape/dynamic_slice_push.h"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// Whether the elements a view reaches from its offset (its strides must be non-negative) stay
// in the offset's buffer chunk, within 2^32 elements: then one base address reaches them all.
bool in_one_chunk(const Tensor& t) {
  int64_t last = t.offset;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.strides[d] < 0) throw Error(ErrorKind::Unsupported, "slice: a view with negative strides");
    last += std::max<int64_t>(0, t.shape[d] - 1) * t.strides[d];
  }
  uint64_t e = dtype_size(t.type), chunk = t.buffer->chunk_bytes();
  return last - t.offset < (int64_t(1) << 32) && uint64_t(t.offset) * e / chunk == uint64_t(last) * e / chunk;
}

void check_one_chunk(const Tensor& t) {
  if (!in_one_chunk(t))
    throw Error(ErrorKind::Unsupported, "slice: a view spanning more than one device buffer chunk or 2^32 elements");
}

// A variant of dynamic_slice.comp: words of one element's size.
struct DynamicSliceVariant {
  static constexpr const char* kTemplate = "dynamic_slice";
  uint8_t bytes = 4;  // 1, 2, 4, 8 or 16
  uint32_t workgroup = kWorkgroupSize;

  auto fields() const { return std::tie(bytes, workgroup); }
  KernelKey source() const {
    return KernelKey{kTemplate,
                     {{"ELEM", glsl_word_type(bytes)}, {"ELEM_BYTES", std::to_string(bytes)},
                      {"ELEM_ALIGN", std::to_string(std::min<size_t>(bytes, 16))}},
                     workgroup};
  }
  static std::vector<DynamicSliceVariant> declared(const DeviceInfo&) {
    std::vector<DynamicSliceVariant> all;
    for (uint8_t bytes : {1, 2, 4, 8, 16})
      for (uint32_t workgroup : {kWorkgroupSize, kSmallWorkgroup}) all.push_back({bytes, workgroup});
    return all;
  }
};

const Kernel& kernel_for(Device& device, size_t bytes, uint64_t elements) {
  return device.impl().kernels.get(
      DynamicSliceVariant{uint8_t(bytes), linear_workgroup_size(*device.impl().core, elements, kWorkgroupSize)});
}

// The starts of every axis: static ones clamped into [0, limit], dynamic ones as the word
// holding them (patched into the parameter block) and how to read it.
struct Starts {
  DynamicSliceParams params{};
  std::vector<AddressPatch> patches;
  std::vector<uint32_t> slots;
};

Starts starts_of(const LowerArgs& a, const ShapeAttrs& attrs, size_t first_start_input, const Shape& limits) {
  Starts s;
  for (size_t d = 0; d < limits.size(); ++d) {
    s.params.limit[d] = uint32_t(limits[d]);
    s.params.static_start[d] = uint32_t(std::clamp<int64_t>(attrs.starts[d], 0, limits[d]));
  }
  for (size_t j = 0; j < attrs.dynamic_axes.size(); ++j) {
    size_t d = size_t(attrs.dynamic_axes[j]);
    const LowerInput& in = a.inputs[first_start_input + j];
    uint64_t bytes = dtype_size(in.tensor.type), at = uint64_t(in.tensor.offset) * bytes;
    s.params.start_kind[d] = uint32_t(bytes) | (is_signed(in.tensor.type) ? 256u : 0u) | uint32_t((at & 3) * 8) << 16;
    s.patches.push_back({uint32_t(offsetof(DynamicSliceParams, start_addr) + d * sizeof(uint64_t)), {in.slot, at & ~uint64_t(3)}});
    s.slots.push_back(in.slot);
  }
  return s;
}

// The big side (slice's source, put_slice's output) over several chunks: the kernel finds each
// element through a table of the buffer's chunk addresses. Strides (times steps) must fit 32
// bits, and the buffer at most NXV_DYNAMIC_SLICE_MAX_CHUNKS chunks.
void address_big_side(Starts& s, const Tensor& t, uint32_t slot, const std::vector<int64_t>& steps) {
  if (in_one_chunk(t)) return;
  const Buffer& b = *t.buffer;
  uint64_t e = dtype_size(t.type), chunk_elems = b.chunk_bytes() / e;
  if (b.chunks().size() > NXV_DYNAMIC_SLICE_MAX_CHUNKS)
    throw Error(ErrorKind::Unsupported, "slice: dynamic starts into a buffer of more than " +
                                            std::to_string(NXV_DYNAMIC_SLICE_MAX_CHUNKS) + " chunks");
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (uint64_t(t.strides[d]) * uint64_t(steps.empty() ? 1 : steps[d]) >= (uint64_t(1) << 32))
      throw Error(ErrorKind::Unsupported, "slice: dynamic starts with strides of 2^32 elements or more");
  s.params.chunk_shift = uint32_t(std::countr_zero(chunk_elems));
  s.params.big_offset = uint64_t(t.offset);
  for (size_t k = 0; k < b.chunks().size(); ++k)
    s.patches.push_back({uint32_t(offsetof(DynamicSliceParams, big_chunk) + k * sizeof(uint64_t)),
                         {slot, uint64_t(k) * b.chunk_bytes()}});
}

}  // namespace

void declare_dynamic_slice_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<DynamicSliceVariant>(out, info);
}

void lower_dynamic_slice(const LowerArgs& a, const ShapeAttrs& attrs) {
  const Tensor& in = a.inputs[0].tensor;
  const Tensor& out = a.output;
  size_t rank = in.shape.size();
  Shape limits(rank);
  for (size_t d = 0; d < rank; ++d) limits[d] = in.shape[d] - attrs.lengths[d];
  Starts s = starts_of(a, attrs, 1, limits);
  address_big_side(s, in, a.inputs[0].slot, attrs.steps);
  s.params.rank = uint32_t(rank);
  for (size_t d = 0; d < rank; ++d) {
    s.params.shape[d] = uint32_t(out.shape[d]);
    s.params.src_stride[d] = uint32_t(in.strides[d] * attrs.steps[d]);
    s.params.start_stride[d] = uint32_t(in.strides[d]);
  }
  size_t bytes = dtype_size(out.type);
  uint64_t e = bytes, total = uint64_t(out.size());
  const Kernel& kernel = kernel_for(a.device, bytes, total);
  for (uint64_t at = 0; at < total;) {  // one launch per output chunk
    uint64_t len = std::min<uint64_t>(total - at, out.buffer->bytes_left_in_chunk(at * e) / e);
    len = std::min<uint64_t>(len, kMaxDispatchElements);
    DynamicSlicePush push{};
    push.n = uint32_t(len), push.start = uint32_t(at);
    std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, len, kernel.workgroup_size), 1, 1};
    // (A chunked source is reached through the parameter block's table; in_addr is unused.)
    uint64_t in_at = s.params.chunk_shift ? 0 : uint64_t(in.offset) * e;
    Launch& l = a.builder.launch(kernel, grid, push,
                                 {{offsetof(DynamicSlicePush, out_addr), {a.output_slot, at * e}},
                                  {offsetof(DynamicSlicePush, in_addr), {a.inputs[0].slot, in_at}}});
    a.builder.params(l, s.params, offsetof(DynamicSlicePush, params_addr), s.patches);
    a.builder.use(l, a.inputs[0].slot, Access::Read);
    for (uint32_t slot : s.slots) a.builder.use(l, slot, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
    at += len;
  }
}

void lower_dynamic_put_slice(const LowerArgs& a, const ShapeAttrs& attrs) {
  BoundTensor in = converted(a.device, a.builder, {a.inputs[0].tensor, a.inputs[0].slot}, a.out.type);
  BoundTensor update = converted(a.device, a.builder, {a.inputs[1].tensor, a.inputs[1].slot}, a.out.type);
  const Tensor& out = a.output;
  append_copy(a.device, a.builder, in.tensor, in.slot, out, a.output_slot);
  if (update.tensor.size() == 0) return;
  check_one_chunk(update.tensor);
  size_t rank = out.shape.size();
  Shape limits(rank);
  for (size_t d = 0; d < rank; ++d) limits[d] = out.shape[d] - update.tensor.shape[d];
  Starts s = starts_of(a, attrs, 2, limits);
  address_big_side(s, out, a.output_slot, {});
  s.params.rank = uint32_t(rank);
  s.params.put = 1;
  for (size_t d = 0; d < rank; ++d) {
    s.params.shape[d] = uint32_t(update.tensor.shape[d]);
    s.params.src_stride[d] = uint32_t(update.tensor.strides[d]);
    s.params.dst_stride[d] = uint32_t(out.strides[d]);
    s.params.start_stride[d] = uint32_t(out.strides[d]);
  }
  size_t bytes = dtype_size(out.type);
  uint64_t e = bytes, total = uint64_t(update.tensor.size());
  DynamicSlicePush push{};
  push.n = uint32_t(total);
  const Kernel& kernel = kernel_for(a.device, bytes, total);
  std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, total, kernel.workgroup_size), 1, 1};
  Launch& l = a.builder.launch(kernel, grid, push,
                               {{offsetof(DynamicSlicePush, out_addr), {a.output_slot, s.params.chunk_shift ? 0 : uint64_t(out.offset) * e}},
                                {offsetof(DynamicSlicePush, in_addr), {update.slot, uint64_t(update.tensor.offset) * e}}});
  a.builder.params(l, s.params, offsetof(DynamicSlicePush, params_addr), s.patches);
  a.builder.use(l, update.slot, Access::Read);
  for (uint32_t slot : s.slots) a.builder.use(l, slot, Access::Read);
  a.builder.use(l, a.output_slot, Access::Write);
}

}  // namespace nxv
