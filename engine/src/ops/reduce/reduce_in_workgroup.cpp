// Mirrors ReduceFamily::lower_reduction's plan (reduce.cpp) without fused chains.
#include "ops/reduce/reduce_in_workgroup.hpp"

#include <algorithm>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "ops/reduce/folds.hpp"
#include "ops/reduce/reduce_attrs.hpp"

namespace nxv {

std::optional<WorkgroupReduce> workgroup_reduce(Device& device, OpId op, const OutSpec& out, const TensorSpec& in,
                                                const Attrs& attrs, std::string& why) {
  const bool logical = op == OpId::all || op == OpId::any;
  if (op != OpId::sum && op != OpId::product && op != OpId::reduce_max && op != OpId::reduce_min && !logical)
    return why = std::string(op_info(op).name) + " is not computed in a loop kernel yet", std::nullopt;
  const auto& ra = attrs.as<ReduceAttrs>();
  if (ra.combiner || ra.prologue || ra.epilogue)
    return why = std::string(op_info(op).name) + ": a reduction with fused work", std::nullopt;
  Tensor view;
  view.type = in.type, view.shape = in.shape, view.strides = in.strides, view.offset = in.offset;
  if (view.size() == 0) return why = "an empty reduction", std::nullopt;
  auto geometry = reduce_geometry(view, reduced_axes(op, attrs, in.shape.size()));
  if (!geometry) return why = std::string(op_info(op).name) + ": a reduction its kernel copies first", std::nullopt;
  const DeviceCore& core = *device.impl().core;
  const bool cpu = cpu_paths(core.profile());
  constexpr uint32_t kWorkgroupSize = 256;  // reduce.cpp's
  auto passes = plan_reduce_passes(*geometry, cpu ? 8192 : (1u << 19), kWorkgroupSize, !cpu);
  const auto& info = core.info();
  WorkgroupReduce w;
  for (size_t p = 0; p < passes.size(); ++p) {
    const ReducePass& pass = passes[p];
    const ReduceGeometry& g = pass.geometry;
    WorkgroupReducePass wp;
    wp.geometry = g;
    wp.chunks = pass.chunks, wp.chunk_len = pass.chunk_len;
    wp.lanes = pass.threads_per_row;
    wp.vec4 = p == 0 && g.inner == 1 && g.reduced_stride == 1 && g.reduced % 4 == 0 &&
              (g.outer == 1 || g.outer_stride % 4 == 0) && in.offset % 4 == 0 && pass.chunk_len % 4 == 0 &&
              !glsl_vec4_type(in.type).empty() && !tuning().no_vec4;
    bool subgroup = pass.threads_per_row > 1 && !pass.lanes_apart && info.features.subgroup_shuffle &&
                    info.features.subgroup_basic;
    if (subgroup) {
      // The shuffles' reach is gl_SubgroupSize: the device's one size, or not known here.
      if (info.min_subgroup_size != info.max_subgroup_size || info.subgroup_size == 0)
        return why = std::string(op_info(op).name) + ": a device whose subgroup size varies", std::nullopt;
      wp.shuffle_width = std::min(wp.lanes, info.subgroup_size);
    }
    w.passes.push_back(wp);
  }
  w.acc = fold_acc_type(fold_kind(op), out.type, in.type);
  Fold fold = fold_for(fold_kind(op), w.acc);
  w.ident = fold.ident;
  w.combine = fold.combine;
  if (logical) {
    AccType c = acc_of(in.type);
    w.load = "uint(" + glsl_load(in.type, c) + " != " + glsl_name(c) + "(0))";
  } else {
    w.load = glsl_load(in.type, w.acc);
  }
  w.store = glsl_store(out.type);
  return w;
}

}  // namespace nxv
