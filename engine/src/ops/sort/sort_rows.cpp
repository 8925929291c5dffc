#include "ops/sort/sort_rows.hpp"

#include <algorithm>
#include <bit>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "memory/copy.hpp"
#include "ops/reduce/reduce_plan.hpp"
#include "ops/sort/sort_keys.hpp"
#include "ops/sort/sort_push.h"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;
// Slots one workgroup sorts at least: short rows share a workgroup, RPW of them.
constexpr uint32_t kMinSpan = 512;

// Rows a workgroup sorts together: short rows share one, RPW of them.
uint32_t rows_per_group(uint32_t p) { return std::max<uint32_t>(1, kMinSpan / p); }

// A variant of sort_rows.comp: rows padded to `p` slots (a power of two), sorted by value or,
// with `arg` (argsort, top_k), their indices stored as `out`.
struct SortRowsVariant {
  static constexpr const char* kTemplate = "sort_rows";
  bool arg = false;
  DType out = DType::F32, in = DType::F32;
  bool descending = false;
  uint32_t p = 2;

  auto fields() const { return std::tie(arg, out, in, descending, p); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    auto& d = key.defines;
    sort_features(in, arg ? std::optional<DType>(out) : std::nullopt).add_defines(d);
    d.emplace_back("WG", std::to_string(kWorkgroupSize));
    d.emplace_back("P", std::to_string(p));
    d.emplace_back("RPW", std::to_string(rows_per_group(p)));
    d.emplace_back("ARG", arg ? "1" : "0");
    add_sort_key_defines(d, in, descending);
    if (arg) add_index_store_defines(d, out);
    return key;
  }

  // Every sortable type, each direction and row length: sorted values, and s64 indices.
  static std::vector<SortRowsVariant> declared(const DeviceInfo&) {
    std::vector<SortRowsVariant> all;
    for (DType in : kAllDTypes) {
      if (!sortable(in)) continue;
      for (bool descending : {false, true})
        for (uint32_t p = 2; p <= uint32_t(kRowSortMax); p *= 2) {
          all.push_back({false, in, in, descending, p});
          all.push_back({true, DType::S64, in, descending, p});
        }
    }
    return all;
  }
};

}  // namespace

void declare_sort_rows_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<SortRowsVariant>(out, info);
}

void lower_row_sort(const LowerArgs& a, const SortAttrs& attrs, int64_t n_out) {
  const Tensor& in = a.inputs[0].tensor;
  Tensor source = in;
  uint32_t source_slot = a.inputs[0].slot;
  std::optional<ReduceGeometry> g;
  if (in.shape.empty()) {
    g = ReduceGeometry{1, 1, 1, 1, 1, 1};
  } else {
    std::vector<bool> flags(in.shape.size(), false);
    flags[size_t(attrs.axis)] = true;
    g = reduce_geometry(in, flags);
    if (!g) {  // a view whose axes do not collapse: laid out row-major first
      source = empty(a.device, in.type, in.shape);
      source_slot = a.builder.bind(source.buffer);
      append_copy(a.device, a.builder, in, a.inputs[0].slot, source, source_slot);
      g = reduce_geometry(source, flags);
    }
  }
  uint32_t p = std::max<uint32_t>(2, std::bit_ceil(uint32_t(g->reduced)));
  DeviceImpl& impl = a.device.impl();
  bool arg = a.op == OpId::argsort || a.op == OpId::top_k;
  const Kernel& kernel = impl.kernels.get(SortRowsVariant{arg, a.out.type, in.type, attrs.descending, p});
  SortRowsPush push{};
  uint64_t rows = g->outer * g->inner;
  push.rows = uint32_t(rows), push.n = uint32_t(g->reduced), push.inner = uint32_t(g->inner);
  push.outer_stride = uint32_t(g->outer_stride), push.n_stride = uint32_t(g->reduced_stride);
  push.inner_stride = uint32_t(g->inner_stride);
  push.n_out = n_out > 0 ? uint32_t(n_out) : push.n;
  uint64_t groups = (rows + rows_per_group(p) - 1) / rows_per_group(p);
  std::array<uint32_t, 3> grid{workgroups_for(*impl.core, groups * kWorkgroupSize, kWorkgroupSize), 1, 1};
  BufferRef from{source_slot, uint64_t(source.offset) * dtype_size(in.type)};
  Launch& l = a.builder.launch(kernel, grid, push,
                               {{offsetof(SortRowsPush, in_addr), from}, {offsetof(SortRowsPush, out_addr), {a.output_slot, 0}}});
  a.builder.use(l, source_slot, Access::Read);
  a.builder.use(l, a.output_slot, Access::Write);
}

}  // namespace nxv
