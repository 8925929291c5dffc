// The sort family: sort and argsort along any axis, ascending or descending, on every real Nx
// type, stable (as Nx.BinaryBackend is), with Nx's order: NaN above +Inf (first when
// descending), -0.0 equal to 0.0. Rows up to kRowSortMax are sorted in shared memory, one
// launch (sort_rows.cpp); longer ones by an LSD radix sort (radix.cpp). top_k is the row sort's
// argsort, descending, writing the first k of each row; for longer rows, the radix argsort's
// first k columns.
#include "device/device_impl.hpp"
#include "memory/copy.hpp"
#include "ops/family.hpp"
#include "ops/sort/radix.hpp"
#include "ops/sort/sort_attrs.hpp"
#include "ops/sort/sort_keys.hpp"
#include "ops/sort/sort_rows.hpp"

namespace nxv {
namespace {

// top_k (Nx.Block.TopK) along the last axis.
Support check_top_k(const CheckArgs& c, const SortAttrs& a) {
  auto invalid = [&](const std::string& why) { return not_native("top_k: " + why, ErrorKind::InvalidArgument); };
  const TensorSpec& in = c.inputs[0];
  if (in.shape.empty()) return invalid("needs an axis");
  int64_t n = in.shape.back();
  if (a.k < 0 || a.k > n) return invalid("k must be in [0, the last axis' size]");
  Shape expected = in.shape;
  expected.back() = a.k;
  if (c.out.shape != expected) return invalid("the output shape does not match");
  if (!sortable(in.type)) return invalid("complex numbers have no order");
  if (!is_integer(c.out.type)) return invalid("indices are integers");
  const DeviceCore& core = *c.device.impl().core;
  uint64_t elements = uint64_t(shape_size(in.shape));
  // (Long rows: the whole argsort is written first, indices as wide as the output's.)
  uint64_t widest = std::max<uint64_t>({dtype_size(in.type), dtype_size(c.out.type), 4});
  if (elements >= (1ull << 32) || elements * widest > core.chunk_bytes())
    return not_native("top_k: inputs over 2^32 elements or one buffer chunk");
  try {
    sort_features(in.type, c.out.type).check(core, "top_k");
  } catch (const Error& e) {
    return not_native(e.what());
  }
  return {};
}

class SortFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    declare_sort_rows_variants(out, info);
    declare_radix_variants(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId op, const AttrReader& r) const override {
    SortAttrs a;
    if (op == OpId::top_k) {  // along the last axis (set by check and lower), descending
      a.k = r.integer("k");
      a.descending = true;
      return Attrs::of(a);
    }
    if (r.has("axis")) a.axis = r.integer("axis");
    if (r.has("direction")) {
      std::string dir = r.atom("direction");
      if (dir != "asc" && dir != "desc")
        throw Error(ErrorKind::InvalidArgument, "option direction: expected :asc or :desc, got :" + dir);
      a.descending = dir == "desc";
    }
    a.stable = r.has("stable") && r.boolean("stable");
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    std::string name(op_info(c.op).name);
    if (c.attrs.empty()) return not_native(name + ": needs its options (axis, direction)", ErrorKind::InvalidArgument);
    const auto& a = c.attrs.as<SortAttrs>();
    const TensorSpec& in = c.inputs[0];
    auto invalid = [&](const std::string& why) { return not_native(name + ": " + why, ErrorKind::InvalidArgument); };
    if (c.op == OpId::top_k) return check_top_k(c, a);
    if (in.shape.empty() ? a.axis != 0 : (a.axis < 0 || a.axis >= int64_t(in.shape.size())))
      return invalid("axis out of range");
    if (c.out.shape != in.shape) return invalid("the output has the input's shape");
    if (!sortable(in.type)) return invalid("complex numbers have no order");
    bool arg = c.op == OpId::argsort;
    if (arg && !is_integer(c.out.type)) return invalid("indices are integers");
    if (!arg && c.out.type != in.type) return invalid("the output type must be the input's");
    uint64_t elements = uint64_t(shape_size(in.shape));
    const DeviceCore& core = *c.device.impl().core;
    uint64_t widest = std::max<uint64_t>(dtype_size(in.type), 4);
    if (elements >= (1ull << 32) || elements * widest > core.chunk_bytes())
      return not_native(name + ": inputs over 2^32 elements or one buffer chunk are not sorted natively yet");
    try {
      sort_features(in.type, arg ? std::optional<DType>(c.out.type) : std::nullopt).check(core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const auto& attrs = a.attrs.as<SortAttrs>();
    const Tensor& in = a.inputs[0].tensor;
    if (in.size() == 0) return;
    if (a.op == OpId::top_k) {  // the first k of each row's stable descending argsort
      SortAttrs along = attrs;
      along.axis = int64_t(in.shape.size()) - 1;
      along.descending = true;
      if (in.shape.back() <= kRowSortMax) return lower_row_sort(a, along, attrs.k);
      // Rows too long for shared memory: the radix sort's stable descending argsort of whole
      // rows, then its first k columns.
      Tensor all = empty(a.device, a.out.type, in.shape);
      uint32_t all_slot = a.builder.bind(all.buffer);
      OutSpec all_spec{a.out.type, in.shape};
      lower_radix_sort(LowerArgs{a.device, OpId::argsort, all_spec, a.inputs, all, all_slot, a.attrs, a.builder}, along);
      std::vector<int64_t> zeros(in.shape.size(), 0), ones(in.shape.size(), 1);
      append_copy(a.device, a.builder, slice_view(all, zeros, a.output.shape, ones), all_slot, a.output, a.output_slot);
      return;
    }
    int64_t n = in.shape.empty() ? 1 : in.shape[size_t(attrs.axis)];
    if (n <= kRowSortMax) return lower_row_sort(a, attrs);
    lower_radix_sort(a, attrs);
  }
};

}  // namespace

const Family& sort_family() {
  static const SortFamily family;
  return family;
}

}  // namespace nxv
