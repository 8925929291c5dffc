// The index family: gather (with axes), take and take_along_axis (Nx.Block.Take,
// Nx.Block.TakeAlongAxis), indexed_add and indexed_put, every Nx type, any index integer type,
// any layout. The addressed tensor is laid out as [O, A_1..A_depth, Q] (a view when it already
// is, else a row-major copy); gather.comp copies words of the addressed slices, scatter.comp
// walks the update rows in order per (O, Q) lane. Out-of-range indices: gathers clamp them,
// scatters drop the row (XLA's rules; Nx.BinaryBackend raises).
#include <algorithm>

#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_uses.hpp"
#include "kernels/glsl_words.hpp"
#include "memory/copy.hpp"
#include "ops/index/index_attrs.hpp"
#include "ops/index/scatter_push.h"
#include "ops/reduce/folds.hpp"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

bool is_scatter(OpId op) { return op == OpId::indexed_add || op == OpId::indexed_put; }


// Where the indices address the tensor: the permutation that brings the addressed axes
// together as [outer..., addressed..., inner...], and the three extents.
struct Geometry {
  std::vector<int64_t> perm;
  std::vector<int64_t> dims;  // addressed extents
  int64_t outer = 1, inner = 1;
};

Geometry geometry(OpId op, const IndexAttrs& a, const Shape& shape, size_t depth) {
  Geometry g;
  size_t rank = shape.size();
  if (op == OpId::take || op == OpId::take_along_axis) {
    for (size_t d = 0; d < rank; ++d) g.perm.push_back(int64_t(d));
    g.dims = {shape[a.axis]};
    for (int64_t d = 0; d < a.axis; ++d) g.outer *= shape[d];
    for (size_t d = size_t(a.axis) + 1; d < rank; ++d) g.inner *= shape[d];
    return g;
  }
  std::vector<int64_t> axes = a.axes;
  if (axes.empty())
    for (size_t d = 0; d < depth; ++d) axes.push_back(int64_t(d));
  g.perm = axes;
  for (size_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), int64_t(d)) == axes.end()) {
      g.perm.push_back(int64_t(d));
      g.inner *= shape[d];
    }
  for (int64_t ax : axes) g.dims.push_back(shape[ax]);
  return g;
}

void add_index_defines(Defines& d, FeatureSet& f, DType idx) {
  f.add_type(idx);
  add_buffer_defines(d, "IDX", idx);
  d.emplace_back("IDX_SIGNED", is_signed(idx) ? "1" : "0");
  d.emplace_back("IDX_WIDE", dtype_size(idx) == 8 ? "1" : "0");
}

// A row-major copy of `t` unless it already is one.
BoundTensor dense(Device& device, LaunchBuilder& builder, const BoundTensor& t) {
  if (t.tensor.is_contiguous()) return t;
  Tensor out = empty(device, t.tensor.type, t.tensor.shape);
  uint32_t slot = builder.bind(out.buffer);
  append_materialize(device, builder, t.tensor, t.slot, out, slot);
  return {out, slot};
}

// The accumulator of indexed_add: Nx.BinaryBackend sums integers exactly (wrapped on store),
// floats in double.
AccType add_acc(DType out, bool has_f64) {
  if (is_complex(out)) return has_f64 ? AccType::C128 : AccType::C64;
  if (is_float(out)) return has_f64 ? AccType::F64 : AccType::F32;
  return acc_of(out);
}

// A variant of gather.comp: words of `word` bytes addressed by indices of type `idx`.
struct GatherVariant {
  static constexpr const char* kTemplate = "gather";
  DType idx = DType::S64;
  uint8_t word = 4;  // 1, 2, 4, 8 or 16

  auto fields() const { return std::tie(idx, word); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    FeatureSet f;
    if (word == 1) f.add_type(DType::U8);
    if (word == 2) f.add_type(DType::U16);
    add_index_defines(key.defines, f, idx);
    f.add_defines(key.defines);
    key.defines.emplace_back("ELEM", glsl_word_type(word));
    key.defines.emplace_back("ELEM_BYTES", std::to_string(word));
    key.defines.emplace_back("ELEM_ALIGN", std::to_string(word));
    return key;
  }

  static std::vector<GatherVariant> declared(const DeviceInfo&) {
    std::vector<GatherVariant> all;
    for (DType idx : kAllDTypes)
      if (is_integer(idx))
        for (uint8_t word : {1, 2, 4, 8, 16}) all.push_back({idx, word});
    return all;
  }
};

// A variant of scatter.comp: indexed_add (`add`) or indexed_put of updates `upd` into `out`.
struct ScatterVariant {
  static constexpr const char* kTemplate = "scatter";
  bool add = false;
  DType out = DType::F32, upd = DType::F32, idx = DType::S64;
  bool has_f64 = false;  // the device's f64: indexed_add's float accumulator (add_acc)

  auto fields() const { return std::tie(add, out, upd, idx, has_f64); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = 64;
    AccType acc = add_acc(out, has_f64);
    auto& d = key.defines;
    FeatureSet f;
    f.add_type(out);
    f.add_type(upd);
    add_index_defines(d, f, idx);
    if (add) add_acc_features(f, acc);
    f.add_defines(d);
    d.emplace_back("ADD", add ? "1" : "0");
    d.emplace_back("ACC", glsl_name(acc));
    add_buffer_defines(d, "OUT", out);
    add_buffer_defines(d, "UPD", upd);
    d.emplace_back("LOAD_UPD(x)", glsl_load(upd, acc));
    d.emplace_back("LOAD_OUT(x)", glsl_load(out, acc));
    d.emplace_back("STORE_OUT(v)", glsl_store(out));
    append_glsl_use_defines(d);
    return key;
  }

  // Both ops on every type, updates of the output's type, every index type, with the device's f64.
  static std::vector<ScatterVariant> declared(const DeviceInfo& info) {
    std::vector<ScatterVariant> all;
    for (bool add : {false, true})
      for (DType out : kAllDTypes)
        for (DType idx : kAllDTypes)
          if (is_integer(idx)) all.push_back({add, out, out, idx, info.features.float64});
    return all;
  }
};

class IndexFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<GatherVariant>(out, info);
    nxv::declare_variants<ScatterVariant>(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId op, const AttrReader& r) const override {
    IndexAttrs a;
    if (op == OpId::take || op == OpId::take_along_axis) a.axis = r.has("axis") ? r.integer("axis") : 0;
    else if (r.has("axes")) a.axes = r.integers("axes");
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    std::string name(op_info(c.op).name);
    auto invalid = [&](const std::string& why) { return not_native(name + ": " + why, ErrorKind::InvalidArgument); };
    if (c.attrs.empty()) return invalid("needs its options");
    const auto& a = c.attrs.as<IndexAttrs>();
    const TensorSpec& t = c.inputs[0];
    const TensorSpec& idx = c.inputs[1];
    if (!is_integer(idx.type)) return invalid("indices must be integers");
    size_t rank = t.shape.size();
    Shape expected;
    if (c.op == OpId::take || c.op == OpId::take_along_axis) {
      if (a.axis < 0 || a.axis >= int64_t(rank)) return invalid("axis out of range");
      if (c.op == OpId::take) {
        expected.assign(t.shape.begin(), t.shape.begin() + a.axis);
        expected.insert(expected.end(), idx.shape.begin(), idx.shape.end());
        expected.insert(expected.end(), t.shape.begin() + a.axis + 1, t.shape.end());
      } else {
        if (idx.shape.size() != rank) return invalid("indices must have the tensor's rank");
        for (size_t d = 0; d < rank; ++d)
          if (int64_t(d) != a.axis && idx.shape[d] != t.shape[d]) return invalid("indices must match the tensor off the axis");
        expected = idx.shape;
      }
    } else {
      if (idx.shape.empty()) return invalid("indices need a last axis");
      size_t depth = size_t(idx.shape.back());
      if (depth > NXV_INDEX_MAX_DEPTH) return not_native(name + ": index rows longer than 8");
      if (!a.axes.empty() && a.axes.size() != depth) return invalid("axes must match the index depth");
      if (a.axes.empty() && depth > rank) return invalid("index rows longer than the rank");
      std::vector<bool> seen(rank, false);
      for (int64_t ax : a.axes) {
        if (ax < 0 || ax >= int64_t(rank) || seen[ax]) return invalid("invalid axes");
        seen[ax] = true;
      }
      Geometry g = geometry(c.op, a, t.shape, depth);
      Shape batch(idx.shape.begin(), idx.shape.end() - 1);
      Shape rest;
      for (size_t k = g.dims.size(); k < g.perm.size(); ++k) rest.push_back(t.shape[g.perm[k]]);
      expected = batch;
      expected.insert(expected.end(), rest.begin(), rest.end());
      if (is_scatter(c.op)) {
        if (c.inputs[2].shape != expected) return invalid("updates must have one slice per index row");
        expected = t.shape;
      }
    }
    if (expected != c.out.shape) return invalid("the output shape does not match");
    if (!is_scatter(c.op) && c.out.type != t.type) return invalid("the output type must be the tensor's");
    // The kernels address each input from one base address: each must fit one buffer chunk, and
    // so must scatter outputs (indexed_add's running sums take up to 16 bytes per target element)
    uint64_t chunk = c.device.impl().core->chunk_bytes();
    auto too_big = [&](const Shape& s, uint64_t bytes_each) {
      return shape_size(s) >= (int64_t(1) << 31) || uint64_t(shape_size(s)) * bytes_each > chunk;
    };
    // (gathers write their output chunk by chunk).
    bool big = is_scatter(c.op) ? too_big(c.out.shape, c.op == OpId::indexed_add ? 16 : dtype_size(c.out.type))
                                : shape_size(c.out.shape) >= (int64_t(1) << 31);
    for (const auto& i : c.inputs) big = big || too_big(i.shape, dtype_size(i.type));
    if (big) return not_native(name + ": tensors over 2^31 elements or one buffer chunk are not indexed natively yet");
    FeatureSet f;
    for (const auto& i : c.inputs) f.add_type(i.type);
    f.add_type(c.out.type);
    if (c.op == OpId::indexed_add) {
      if (c.out.type == DType::BF16 || c.out.type == DType::F8 || c.out.type == DType::F8E4M3FN)
        ;  // loaded through the nxv_*_load helpers
      add_acc_features(f, add_acc(c.out.type, c.device.has(kCapFloat64)));
    }
    try {
      f.check(*c.device.impl().core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    if (is_scatter(c.op))
      for (size_t k : {size_t(0), size_t(2)})
        if (c.inputs[k].type != c.out.type) {
          TensorSpec spec = contiguous_spec(c.inputs[k].type, {});
          if (Support s = check_op(c.device, OpId::as_type, OutSpec{c.out.type, {}}, std::span<const TensorSpec>(&spec, 1)); !s)
            return s;
        }
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const auto& attrs = a.attrs.as<IndexAttrs>();
    BoundTensor idx = dense(a.device, a.builder, {a.inputs[1].tensor, a.inputs[1].slot});
    size_t depth = (a.op == OpId::take || a.op == OpId::take_along_axis) ? 1 : size_t(idx.tensor.shape.back());
    const Tensor& t = a.inputs[0].tensor;
    Geometry g = geometry(a.op, attrs, t.shape, depth);
    IndexPush push{};
    push.depth = uint32_t(depth);
    push.per_element = a.op == OpId::take_along_axis ? 1 : 0;
    uint64_t pitch = 1;
    for (size_t k = g.dims.size(); k-- > 0;) {
      push.dims[k] = uint32_t(g.dims[k]);
      push.pitch[k] = uint32_t(pitch);
      pitch *= uint64_t(g.dims[k]);
    }
    push.a_total = uint32_t(pitch);
    if (a.op == OpId::take_along_axis) push.rows = uint32_t(idx.tensor.shape[attrs.axis]);
    else if (a.op == OpId::take) push.rows = uint32_t(idx.tensor.size());
    else push.rows = uint32_t(idx.tensor.size() / int64_t(depth));
    if (is_scatter(a.op)) return lower_scatter(a, g, idx, push);

    // gather, take, take_along_axis: the tensor laid out [outer, addressed..., inner].
    BoundTensor src = dense(a.device, a.builder, {transpose_view(t, g.perm), a.inputs[0].slot});
    size_t elem = dtype_size(t.type), word = elem;
    uint64_t slice_bytes = uint64_t(g.inner) * elem, in_byte = uint64_t(src.tensor.offset) * elem;
    if (!push.per_element)
      for (size_t w : {16, 8, 4})
        if (w > elem && slice_bytes % w == 0 && in_byte % w == 0) {
          word = w;
          break;
        }
    push.q = uint32_t(slice_bytes / word);
    uint64_t n = uint64_t(g.outer) * push.rows * push.q;
    const Kernel& kernel = a.device.impl().kernels.get(GatherVariant{idx.tensor.type, uint8_t(word)});
    for (uint64_t at = 0; at < n;) {  // one launch per output chunk (chunks hold whole words)
      uint64_t len = std::min<uint64_t>(n - at, a.output.buffer->bytes_left_in_chunk(at * word) / word);
      len = std::min<uint64_t>(len, kMaxDispatchElements);
      GatherPush gp{};
      gp.base = push;
      gp.base.n = uint32_t(len);
      gp.start = uint32_t(at);
      std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, len, kWorkgroupSize), 1, 1};
      Launch& l = a.builder.launch(
          kernel, grid, gp,
          {{offsetof(GatherPush, base) + offsetof(IndexPush, out_addr), {a.output_slot, at * word}},
           {offsetof(GatherPush, base) + offsetof(IndexPush, in_addr), {src.slot, in_byte}},
           {offsetof(GatherPush, base) + offsetof(IndexPush, idx_addr),
            {idx.slot, uint64_t(idx.tensor.offset) * dtype_size(idx.tensor.type)}}});
      a.builder.use(l, src.slot, Access::Read);
      a.builder.use(l, idx.slot, Access::Read);
      a.builder.use(l, a.output_slot, Access::WriteDisjoint);
      at += len;
    }
  }

 private:
  static void lower_scatter(const LowerArgs& a, const Geometry& g, const BoundTensor& idx, IndexPush push) {
    bool add = a.op == OpId::indexed_add;
    DType out = a.out.type;
    // The output starts as the target laid out [addressed..., rest...]; the result is that
    // layout transposed back (a copy, unless the addressed axes lead already).
    const Tensor& t = a.inputs[0].tensor;
    BoundTensor target = converted(a.device, a.builder, {t, a.inputs[0].slot}, out);
    Tensor permuted_target = transpose_view(target.tensor, g.perm);
    bool identity = std::is_sorted(g.perm.begin(), g.perm.end());
    Tensor work = a.output;
    uint32_t work_slot = a.output_slot;
    if (!identity) {
      work = empty(a.device, out, permuted_target.shape);
      work_slot = a.builder.bind(work.buffer);
    } else {
      work.shape = permuted_target.shape;
      work.strides = row_major_strides(work.shape);
    }
    append_materialize(a.device, a.builder, permuted_target, target.slot, work, work_slot);
    BoundTensor updates = add ? BoundTensor{a.inputs[2].tensor, a.inputs[2].slot}
                              : converted(a.device, a.builder, {a.inputs[2].tensor, a.inputs[2].slot}, out);
    updates = dense(a.device, a.builder, updates);
    DType upd = updates.tensor.type;
    push.q = uint32_t(g.inner);
    push.n = uint32_t(g.inner);  // one lane per inner position (outer is 1 for gather-style axes)
    bool has_f64 = a.device.has(kCapFloat64);
    AccType acc = add_acc(out, has_f64);
    ScatterPush sp{};
    sp.base = push;
    std::vector<AddressPatch> patches{
        {offsetof(ScatterPush, base) + offsetof(IndexPush, out_addr), {work_slot, 0}},
        {offsetof(ScatterPush, base) + offsetof(IndexPush, in_addr), {updates.slot, uint64_t(updates.tensor.offset) * dtype_size(upd)}},
        {offsetof(ScatterPush, base) + offsetof(IndexPush, idx_addr), {idx.slot, uint64_t(idx.tensor.offset) * dtype_size(idx.tensor.type)}}};
    std::vector<uint32_t> extra;
    if (add) {
      Tensor sums = empty(a.device, DType::U8, {int64_t(work.size()) * int64_t(acc_bytes(acc))});
      Tensor seen = empty(a.device, DType::U32, {work.size()});
      uint32_t sums_slot = a.builder.bind(sums.buffer), seen_slot = a.builder.bind(seen.buffer);
      AttrNumber zero;
      append_constant(a.device, a.builder, seen, seen_slot, zero);
      patches.push_back({offsetof(ScatterPush, sums_addr), {sums_slot, 0}});
      patches.push_back({offsetof(ScatterPush, seen_addr), {seen_slot, 0}});
      extra = {sums_slot, seen_slot};
    }
    const Kernel& kernel = a.device.impl().kernels.get(ScatterVariant{add, out, upd, idx.tensor.type, has_f64});
    const DeviceCore& core = *a.device.impl().core;
    std::array<uint32_t, 3> grid{workgroups_for(core, push.n, 64), 1, 1};
    Launch& l = a.builder.launch(kernel, grid, sp, std::move(patches));
    a.builder.use(l, updates.slot, Access::Read);
    a.builder.use(l, idx.slot, Access::Read);
    for (uint32_t s : extra) a.builder.use(l, s, Access::Write);
    a.builder.use(l, work_slot, Access::Write);
    if (!identity) {  // back to the target's axis order
      std::vector<int64_t> inverse(g.perm.size());
      for (size_t k = 0; k < g.perm.size(); ++k) inverse[size_t(g.perm[k])] = int64_t(k);
      append_materialize(a.device, a.builder, transpose_view(work, inverse), work_slot, a.output, a.output_slot);
    }
  }
};

}  // namespace

const Family& index_family() {
  static const IndexFamily family;
  return family;
}

}  // namespace nxv
