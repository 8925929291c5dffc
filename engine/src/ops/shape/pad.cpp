// pad and reverse: one gather kernel (pad.comp) per element size; the parameter block holds
// the geometry at any rank up to 8.
#include <algorithm>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_words.hpp"
#include "ops/shape/pad_push.h"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;


void check_reach(const Tensor& t) {
  int64_t last = t.offset;
  for (size_t d = 0; d < t.shape.size(); ++d) last += std::max<int64_t>(0, t.shape[d] - 1) * t.strides[d];
  uint64_t e = dtype_size(t.type), chunk = t.buffer->chunk_bytes();
  if (last - t.offset >= (int64_t(1) << 31) || uint64_t(t.offset) * e / chunk != uint64_t(last) * e / chunk)
    throw Error(ErrorKind::Unsupported, "a view spanning more than one device buffer chunk or 2^31 elements");
}

// A variant of pad.comp: words of one element's size.
struct PadVariant {
  static constexpr const char* kTemplate = "pad";
  uint8_t bytes = 4;  // 1, 2, 4, 8 or 16
  bool runs = false;  // the CPU drivers' runs along the last axis (strided_runs)
  uint32_t workgroup = kWorkgroupSize;

  auto fields() const { return std::tie(bytes, runs, workgroup); }
  KernelKey source() const {
    KernelKey key{.name = kTemplate, .workgroup_size = workgroup};
    key.defines = {{"ELEM", glsl_word_type(bytes)},
                   {"ELEM_BYTES", std::to_string(bytes)},
                   {"ELEM_ALIGN", std::to_string(std::min<size_t>(bytes, 16))}};
    // Defined only where set: the GPU's SPIR-V stays as it was.
    if (runs) key.defines.emplace_back("RUN", std::to_string(kStridedRun) + "u");
    return key;
  }
  static std::vector<PadVariant> declared(const DeviceInfo&) {
    std::vector<PadVariant> all;
    for (uint8_t bytes : {1, 2, 4, 8, 16})
      for (bool runs : {false, true})
        for (uint32_t workgroup : {kWorkgroupSize, kSmallWorkgroup}) all.push_back({bytes, runs, workgroup});
    return all;
  }
};

// Emits the gather from `in` into the output; `value` is the pad value (unused when none).
void emit_gather(const LowerArgs& a, const BoundTensor& in, const BoundTensor& value, const std::vector<PadAxis>& padding,
                 uint32_t reversed) {
  const Tensor& out = a.output;
  size_t bytes = dtype_size(out.type);
  bool runs = strided_runs(*a.device.impl().core);
  PadVariant variant{uint8_t(bytes), runs,
                     linear_workgroup_size(*a.device.impl().core, uint64_t(out.size()), kWorkgroupSize)};
  const Kernel& kernel = a.device.impl().kernels.get(variant);
  PadParams params{};
  params.rank = uint32_t(out.shape.size());
  params.reversed = reversed;
  bool reads = in.tensor.size() > 0;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    params.out_shape[d] = uint32_t(out.shape[d]);
    params.in_shape[d] = uint32_t(in.tensor.shape[d]);
    params.low[d] = int32_t(padding[d].low);
    params.step[d] = uint32_t(padding[d].interior + 1);
    params.in_stride[d] = uint32_t(in.tensor.strides[d]);
  }
  if (reads) check_reach(in.tensor);
  uint64_t e = bytes, total = uint64_t(out.size());
  BufferRef in_ref = reads ? BufferRef{in.slot, uint64_t(in.tensor.offset) * e} : BufferRef{value.slot, uint64_t(value.tensor.offset) * e};
  BufferRef value_ref{value.slot, uint64_t(value.tensor.offset) * e};
  for (uint64_t s = 0; s < total;) {
    uint64_t len = std::min<uint64_t>(total - s, out.buffer->bytes_left_in_chunk(s * e) / e);
    len = std::min<uint64_t>(len, kMaxDispatchElements);
    PadPush push{};
    push.n = uint32_t(len), push.start = uint32_t(s);
    std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, len, kernel.workgroup_size), 1, 1};
    Launch& l = a.builder.launch(kernel, grid, push,
                                 {{offsetof(PadPush, out_addr), {a.output_slot, s * e}},
                                  {offsetof(PadPush, in_addr), in_ref},
                                  {offsetof(PadPush, value_addr), value_ref}});
    a.builder.params(l, params, offsetof(PadPush, params_addr), {});
    if (reads) a.builder.use(l, in.slot, Access::Read);
    a.builder.use(l, value.slot, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
    s += len;
  }
}

}  // namespace

void declare_pad_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<PadVariant>(out, info);
}

void lower_pad(const LowerArgs& a, const ShapeAttrs& attrs) {
  BoundTensor in = converted(a.device, a.builder, {a.inputs[0].tensor, a.inputs[0].slot}, a.out.type);
  BoundTensor value = converted(a.device, a.builder, {a.inputs[1].tensor, a.inputs[1].slot}, a.out.type);
  emit_gather(a, in, value, attrs.padding, 0);
}

void lower_reverse(const LowerArgs& a, const ShapeAttrs& attrs) {
  BoundTensor in{a.inputs[0].tensor, a.inputs[0].slot};
  uint32_t reversed = 0;
  for (int64_t ax : attrs.axes)
    if (in.tensor.shape[ax] > 1) reversed |= 1u << ax;
  std::vector<PadAxis> none(in.tensor.shape.size());
  emit_gather(a, in, in, none, reversed);
}

}  // namespace nxv
