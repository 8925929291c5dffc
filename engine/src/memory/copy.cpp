// Making a view contiguous: a bit copy below every op family (transfers and families use it).
#include <algorithm>

#include "common/errors.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_types.hpp"
#include "memory/glsl/copy_push.h"
#include "memory/copy.hpp"
#include "memory/transfer.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

const char* word_type(size_t bytes) {
  switch (bytes) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint";
    case 8: return "uvec2";
    default: return "uvec4";
  }
}

}  // namespace

void append_copy(Device& device, LaunchBuilder& builder, const Tensor& t, uint32_t in_slot, const Tensor& out,
                 uint32_t out_slot) {
  FeatureSet features;
  features.add_type(t.type);
  features.check(*device.impl().core, "copy");
  if (out.size() == 0) return;
  std::vector<Tensor> views{t};
  bool dense = all_dense(views);
  size_t bytes = dtype_size(t.type);
  VariantKey variant{.family = kLayerMemory, .op = 0};
  variant.layout = dense ? 1 : 0;
  variant.tile = uint32_t(bytes);
  auto& impl = device.impl();
  const Kernel& kernel = impl.kernels.get(variant, [&] {
    return KernelKey{"strided_copy",
                     {{"ELEM", word_type(bytes)}, {"ELEM_BYTES", std::to_string(bytes)},
                      {"ELEM_ALIGN", std::to_string(std::min<size_t>(bytes, 16))}},
                     kWorkgroupSize};
  });
  plan_linear(out, out_slot, views, {in_slot}, dense, NXV_COPY_MAX_RANK, [&](const PlannedRange& p) {
    CopyPush push{};
    push.n = p.n, push.rank = p.rank, push.start = p.start;
    for (int d = 0; d < NXV_COPY_MAX_RANK; ++d) push.shape[d] = p.shape[d], push.stride[d] = p.stride[0][d];
    // Dense launches read element i * stride[0] (1, or 0 for a broadcast scalar); a strided
    // launch whose input is laid out like the output reads element i.
    if (!dense && (p.dense & 1u)) push.stride[0] = 1;
    push.dense = dense || (p.dense & 1u) ? 1u : 0u;
    std::array<uint32_t, 3> grid{workgroups_for(*impl.core, p.n, kWorkgroupSize), 1, 1};
    Launch& l = builder.launch(kernel, grid, push,
                               {{offsetof(CopyPush, out_addr), p.out}, {offsetof(CopyPush, in_addr), p.in[0]}});
    builder.use(l, in_slot, Access::Read);
    builder.use(l, out_slot, Access::Write);
  });
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
