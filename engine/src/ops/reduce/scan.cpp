#include "ops/reduce/scan.hpp"

#include <algorithm>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "memory/copy.hpp"
#include "ops/reduce/folds.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/reduce/reduce_plan.hpp"
#include "ops/reduce/scan_push.h"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;
constexpr uint64_t kSubgroupRowsMinRows = 1024;
constexpr uint64_t kSubgroupRowsMaxLength = 4096;

FoldKind scan_fold(OpId op) {
  switch (op) {
    case OpId::cumulative_sum: return FoldKind::Sum;
    case OpId::cumulative_product: return FoldKind::Product;
    case OpId::cumulative_min: return FoldKind::Min;
    default: return FoldKind::Max;
  }
}

// subgroupShuffle of an accumulator: 64-bit integers travel as two 32-bit halves (as in reduce).
std::string shuffle(AccType acc) {
  if (is_int64(acc)) return glsl_name(acc) + "(packUint2x32(subgroupShuffle(unpackUint2x32(uint64_t(v)), id)))";
  return "subgroupShuffle(v, id)";
}

// A variant of scan.comp: the op, its types and how the kernel walks its rows.
struct ScanVariant {
  static constexpr const char* kTemplate = "scan";
  OpId op = OpId::cumulative_sum;
  DType out = DType::F32, in = DType::F32;
  bool columns = false;  // an invocation per column
  bool sg_rows = false;  // a subgroup per row
  bool vec4 = false;     // ... reading and writing four elements as one vector

  auto fields() const { return std::tie(op, out, in, columns, sg_rows, vec4); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    FoldKind kind = scan_fold(op);
    AccType acc = fold_acc_type(kind, out, in);
    auto& d = key.defines;
    fold_features({in, out}, acc).add_defines(d);
    Fold fold = fold_for(kind, acc);
    d.emplace_back("WG", std::to_string(kWorkgroupSize));
    d.emplace_back("COLUMNS", columns ? "1" : "0");
    d.emplace_back("SG_ROWS", sg_rows ? "1" : "0");
    d.emplace_back("VEC4", vec4 ? "1" : "0");
    if (sg_rows) d.emplace_back("SHUFFLE(v, id)", shuffle(acc));
    if (vec4) {
      d.emplace_back("IN_VEC", glsl_vec4_type(in));
      d.emplace_back("IN_VREG", glsl_vec4_register_type(in));
      d.emplace_back("IN_VALIGN", std::to_string(vec4_alignment(in)));
      d.emplace_back("OUT_VEC", glsl_vec4_type(out));
    }
    d.emplace_back("ACC", glsl_name(acc));
    add_buffer_defines(d, "IN", in);
    add_buffer_defines(d, "OUT", out);
    d.emplace_back("LOAD(x)", glsl_load(in, acc));
    d.emplace_back("STORE_OUT(v)", glsl_store(out));
    d.emplace_back("IDENT", fold.ident);
    d.emplace_back("COMBINE(a, b)", fold.combine);
    append_glsl_use_defines(d);
    return key;
  }

  // Every type a scan stores, in each walk; vectors of four for 4- and 8-byte types.
  static std::vector<ScanVariant> declared(const DeviceInfo&) {
    std::vector<ScanVariant> all;
    for (OpId op : {OpId::cumulative_sum, OpId::cumulative_product, OpId::cumulative_min, OpId::cumulative_max})
      for (DType t : kAllDTypes) {
        if ((is_complex(t) && (op == OpId::cumulative_min || op == OpId::cumulative_max)))
          continue;
        all.push_back({op, t, t, true, false, false});
        all.push_back({op, t, t, false, false, false});
        all.push_back({op, t, t, false, true, false});
        if (!glsl_vec4_type(t).empty()) all.push_back({op, t, t, false, true, true});
      }
    return all;
  }
};

}  // namespace

bool is_cumulative(OpId op) {
  return op == OpId::cumulative_sum || op == OpId::cumulative_product || op == OpId::cumulative_max ||
         op == OpId::cumulative_min;
}

Attrs decode_cumulative(const AttrReader& r) {
  CumulativeAttrs a;
  if (r.has("axis")) a.axis = r.integer("axis");
  a.reverse = r.has("reverse") && r.boolean("reverse");
  return Attrs::of(a);
}

Support check_cumulative(const CheckArgs& c) {
  std::string name(op_info(c.op).name);
  if (c.attrs.empty()) return not_native(name + ": needs its options (axis)", ErrorKind::InvalidArgument);
  const auto& a = c.attrs.as<CumulativeAttrs>();
  const TensorSpec& in = c.inputs[0];
  auto invalid = [&](const std::string& why) { return not_native(name + ": " + why, ErrorKind::InvalidArgument); };
  if (in.shape.empty() ? a.axis != 0 : (a.axis < 0 || a.axis >= int64_t(in.shape.size()))) return invalid("axis out of range");
  if (c.out.shape != in.shape) return invalid("the output has the input's shape");
  if (c.out.type != in.type) return invalid("the output type must be the input's");
  bool extreme = c.op == OpId::cumulative_max || c.op == OpId::cumulative_min;
  if (extreme && is_complex(in.type)) return invalid("complex numbers have no order");
  uint64_t elements = uint64_t(shape_size(in.shape));
  const DeviceCore& core = *c.device.impl().core;
  if (elements >= (1ull << 32) || elements * dtype_size(in.type) > core.chunk_bytes())
    return not_native(name + ": inputs over 2^32 elements or one buffer chunk are not scanned natively yet");
  FeatureSet features = fold_features({in.type}, fold_acc_type(scan_fold(c.op), c.out.type, in.type));
  try {
    glsl_storage_type(in.type);
    features.check(core, name.c_str());
  } catch (const Error& e) {
    return not_native(e.what());
  }
  return {};
}

void declare_scan_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<ScanVariant>(out, info);
}

void lower_cumulative(const LowerArgs& a) {
  const auto& attrs = a.attrs.as<CumulativeAttrs>();
  const Tensor& in = a.inputs[0].tensor;
  std::vector<bool> flags(in.shape.size(), false);
  if (!flags.empty()) flags[size_t(attrs.axis)] = true;
  Tensor source = in;
  uint32_t source_slot = a.inputs[0].slot;
  std::optional<ReduceGeometry> g = reduce_geometry(in, flags);
  if (!g) {  // a view whose axes do not collapse: laid out row-major first
    source = empty(a.device, in.type, in.shape);
    source_slot = a.builder.bind(source.buffer);
    append_copy(a.device, a.builder, in, a.inputs[0].slot, source, source_slot);
    g = reduce_geometry(source, flags);
  }
  DeviceImpl& impl = a.device.impl();
  const auto& features = impl.core->info().features;
  ScanVariant kind{.op = a.op, .out = a.out.type, .in = in.type};
  kind.columns = g->inner > 1;
  // A subgroup per row where rows are many (they fill the device) or short (a workgroup's
  // tiles would be mostly empty); else the workgroup's tiles.
  kind.sg_rows = !kind.columns && features.subgroup_basic && features.subgroup_shuffle &&
                 (g->outer >= kSubgroupRowsMinRows || g->reduced <= kSubgroupRowsMaxLength);
  size_t bytes = dtype_size(in.type);
  kind.vec4 = kind.sg_rows && !attrs.reverse && (bytes == 4 || bytes == 8) && !glsl_vec4_type(in.type).empty() &&
              g->reduced_stride == 1 &&
              g->reduced % 4 == 0 && (g->outer == 1 || g->outer_stride % 4 == 0) && source.offset % 4 == 0;
  const Kernel& kernel = impl.kernels.get(kind);
  ScanPush push{};
  push.outer = uint32_t(g->outer), push.n = uint32_t(g->reduced), push.inner = uint32_t(g->inner);
  push.reverse = attrs.reverse ? 1 : 0;
  push.outer_stride = uint32_t(g->outer_stride), push.n_stride = uint32_t(g->reduced_stride);
  push.inner_stride = uint32_t(g->inner_stride);
  uint64_t work = kind.columns   ? g->outer * g->inner
                  : kind.sg_rows ? g->outer * std::max<uint32_t>(1, impl.core->info().subgroup_size)
                                 : g->outer * kWorkgroupSize;
  std::array<uint32_t, 3> grid{workgroups_for(*impl.core, work, kWorkgroupSize), 1, 1};
  BufferRef from{source_slot, uint64_t(source.offset) * dtype_size(in.type)};
  Launch& l = a.builder.launch(kernel, grid, push,
                               {{offsetof(ScanPush, in_addr), from}, {offsetof(ScanPush, out_addr), {a.output_slot, 0}}});
  a.builder.use(l, source_slot, Access::Read);
  a.builder.use(l, a.output_slot, Access::Write);
}

}  // namespace nxv
