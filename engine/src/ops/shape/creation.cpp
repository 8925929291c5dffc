// iota, eye and constant. iota and eye fill u32 values (index_fill.comp) and convert them to
// the output type with the elementwise as_type kernel; a constant's value travels in a
// parameter block, in the type it came in, through the same conversion: every type gets
// exactly Nx's conversion, and a compiled graph carries its constants with it.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/elementwise/elementwise_push.h"
#include "ops/elementwise/fusion.hpp"
#include "ops/shape/index_fill_push.h"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

// index_fill.comp has one variant: the fill is chosen per launch.
struct IndexFillVariant {
  static constexpr const char* kTemplate = "index_fill";
  auto fields() const { return std::tuple<>(); }
  KernelKey source() const { return KernelKey{kTemplate, {}, kWorkgroupSize}; }
  static std::vector<IndexFillVariant> declared(const DeviceInfo&) { return {{}}; }
};

void emit_index_fill(const LowerArgs& a, const ShapeAttrs& attrs, const Tensor& out, uint32_t out_slot) {
  const Kernel& kernel = a.device.impl().kernels.get(IndexFillVariant{});
  const Shape& shape = out.shape;
  IndexFillPush base{};
  base.inner = 1;
  if (a.op == OpId::eye) {
    base.mode = NXV_FILL_EYE;
    base.rows = uint32_t(shape[shape.size() - 2]);
    base.cols = uint32_t(shape.back());
  } else if (attrs.axis) {
    base.mode = NXV_FILL_IOTA;
    for (size_t d = size_t(*attrs.axis) + 1; d < shape.size(); ++d) base.inner *= uint32_t(shape[d]);
    base.dim = uint32_t(shape[*attrs.axis]);
  }
  uint64_t total = uint64_t(out.size());
  for (uint64_t s = 0; s < total;) {
    uint64_t len = std::min<uint64_t>({total - s, out.buffer->bytes_left_in_chunk(s * 4) / 4, kMaxDispatchElements});
    IndexFillPush push = base;
    push.n = uint32_t(len), push.start = uint32_t(s);
    std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, len, kWorkgroupSize), 1, 1};
    Launch& l = a.builder.launch(kernel, grid, push, {{offsetof(IndexFillPush, out_addr), {out_slot, s * 4}}});
    a.builder.use(l, out_slot, Access::Write);
    s += len;
  }
}

// The constant's value as bytes of its source type (constant_source_type).
std::array<std::byte, 16> value_bytes(const AttrNumber& v, DType type) {
  std::array<std::byte, 16> bytes{};
  auto put = [&](auto x, size_t at) { std::memcpy(bytes.data() + at, &x, sizeof x); };
  switch (type) {
    case DType::S32: put(int32_t(v.i), 0); break;
    case DType::S64: put(v.i, 0); break;
    case DType::U32: put(uint32_t(v.u), 0); break;
    case DType::U64: put(v.u, 0); break;
    case DType::F32: put(float(v.re), 0); break;
    case DType::F64: put(v.re, 0); break;
    case DType::C64: put(float(v.re), 0), put(float(v.im), 4); break;
    default: put(v.re, 0), put(v.im, 8); break;
  }
  return bytes;
}


}  // namespace

void declare_index_fill_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<IndexFillVariant>(out, info);
}

void append_constant(Device& device, LaunchBuilder& builder, const Tensor& out, uint32_t out_slot,
                     const AttrNumber& value) {
  DType from = constant_source_type(value);
  const Kernel& kernel = as_type_kernel(device, out.type, from);
  std::array<std::byte, 16> bytes = value_bytes(value, from);
  Tensor scalar = out;  // any slot will do: the value's address replaces it
  scalar.type = from;
  scalar.shape = {};
  scalar.strides = {};
  scalar.offset = 0;
  Tensor view = broadcast_view(scalar, out.shape);
  plan_linear(out, out_slot, {view}, {out_slot}, true, NXV_EW_MAX_RANK, [&](const PlannedRange& p) {
    ElementwisePush push{};
    push.n = p.n;
    std::array<uint32_t, 3> grid{workgroups_for(*device.impl().core, p.n, kernel.workgroup_size, kernel.max_workgroups), 1, 1};
    Launch& l = builder.launch(kernel, grid, push, {{offsetof(ElementwisePush, out_addr), p.out}});
    builder.params(l, bytes, offsetof(ElementwisePush, a_addr), {});
    builder.use(l, out_slot, Access::Write);
  });
}

void lower_creation(const LowerArgs& a, const ShapeAttrs& attrs) {
  if (a.op == OpId::constant) return append_constant(a.device, a.builder, a.output, a.output_slot, attrs.value);
  if (a.out.type == DType::U32 || a.out.type == DType::S32) return emit_index_fill(a, attrs, a.output, a.output_slot);
  Tensor values = empty(a.device, DType::U32, a.out.shape);
  uint32_t slot = a.builder.bind(values.buffer);
  emit_index_fill(a, attrs, values, slot);
  append_as_type(a.device, a.builder, values, slot, a.output, a.output_slot);
}

}  // namespace nxv
