// The window family: window_sum, window_product, window_max, window_min and window_reduce/6
// (a traced function: ops/reduce/combiner.hpp) (strides, padding negative too, window
// dilations) and window_scatter_max/min (the pooling gradient), on every
// Nx type they take, any layout. One invocation per output element: window.comp folds its
// window in Nx's order; window_scatter.comp gathers, for a tensor position, the source values
// of the windows that select it.
#include <algorithm>
#include <cstdlib>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/fast_division.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "memory/copy.hpp"
#include "ops/family.hpp"
#include "ops/reduce/combiner.hpp"
#include "ops/reduce/folds.hpp"
#include "ops/window/window_attrs.hpp"
#include "ops/window/window_push.h"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

bool is_scatter(OpId op) { return op == OpId::window_scatter_max || op == OpId::window_scatter_min; }

FoldKind fold_kind(OpId op) {
  switch (op) {
    case OpId::window_sum: return FoldKind::Sum;
    case OpId::window_product: return FoldKind::Product;
    case OpId::window_min: return FoldKind::Min;
    default: return FoldKind::Max;
  }
}

std::vector<int64_t> ones_if_absent(const AttrReader& r, const char* key, size_t rank) {
  return r.has(key) ? r.integers(key) : std::vector<int64_t>(rank, 1);
}

// Output extent of a window op along one axis (Nx: the padded extent over the dilated window).
int64_t windows_along(int64_t in, int64_t lo, int64_t hi, int64_t win, int64_t stride, int64_t dilation) {
  int64_t padded = in + lo + hi, span = (win - 1) * dilation + 1;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

// One axis of the window geometry, after axes the window passes through unchanged are merged.
struct Axis {
  int64_t out = 1, in = 1, in_stride = 0, stride = 1, pad_lo = 0, dilation = 1, window = 1, windows = 1;
};

std::vector<Axis> window_axes(const WindowAttrs& w, const Tensor& in, const Shape& out, const Shape& windows,
                              bool scatter) {
  std::vector<Axis> axes;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    Axis x{out[d], in.shape[d], in.strides[d], w.strides[d], w.padding[d].first,
           scatter ? 1 : w.dilations[d], w.dims[d], windows[d]};
    bool through = x.window == 1 && x.stride == 1 && x.dilation == 1 && w.padding[d].first == 0 &&
                   w.padding[d].second == 0;
    if (through && !axes.empty()) {
      Axis& prev = axes.back();
      bool prev_through = prev.window == 1 && prev.stride == 1 && prev.dilation == 1 && prev.pad_lo == 0 &&
                          prev.out == prev.in;
      if (prev_through && prev.in_stride == x.in_stride * x.in) {
        prev.out *= x.out, prev.in *= x.in, prev.windows *= x.windows, prev.in_stride = x.in_stride;
        continue;
      }
    }
    axes.push_back(x);
  }
  if (axes.empty()) axes.push_back(Axis{});
  return axes;
}

// NR, WINS and WSIZE: the window's extent per (merged) axis, compiled in.
void add_window_defines(Defines& d, const std::vector<int64_t>& windows) {
  std::string wins;
  uint64_t size = 1;
  for (int64_t w : windows) {
    wins += (wins.empty() ? "" : ", ") + std::to_string(w);
    size *= uint64_t(w);
  }
  d.emplace_back("NR", std::to_string(windows.size()));
  d.emplace_back("WINS", wins);
  d.emplace_back("WSIZE", std::to_string(size));
}

// The glsl_uses switches of what `key` defines and generates.
void append_uses(KernelKey& key) {
  GlslDefines scanned = key.defines;
  if (!key.generated.empty()) scanned.emplace_back("", key.generated);
  auto uses = glsl_use_defines(scanned);
  key.defines.insert(key.defines.end(), uses.begin(), uses.end());
}

// A variant of window.comp: a fold (window_sum/product/max/min) or window_reduce's traced
// function over windows of extents `windows`, VW outputs per invocation along the last axis
// and VH rows of them along the axis before, stored four-wide or not; `tiled` where the
// windows tile the tensor exactly.
struct WindowVariant {
  static constexpr const char* kTemplate = "window";
  OpId op = OpId::window_sum;
  DType out = DType::F32, in = DType::F32;
  std::vector<int64_t> windows;
  uint32_t vw = 1, vh = 1;
  bool vec_store = false;
  bool tiled = false;
  std::optional<CombinerCode> combiner = std::nullopt;  // window_reduce's function

  auto fields() const { return std::tie(op, out, in, windows, vw, vh, vec_store, tiled, combiner); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    FeatureSet features;
    features.add_type(in);
    features.add_type(out);  // (window_reduce's init value has the output's type)
    AccType acc = acc_of(out);
    add_acc_features(features, acc);
    auto& d = key.defines;
    if (combiner) {
      // Padding and the fold's start hold the accumulator, as Nx pads and folds.
      FeatureSet f = combiner->features;
      f.merge(features);
      f.add_defines(d);
      d.insert(d.end(), combiner->defines.begin(), combiner->defines.end());
      add_window_defines(d, windows);
      d.emplace_back("VW", std::to_string(vw));
      d.emplace_back("TILED", tiled ? "1" : "0");
      d.emplace_back("ACC", glsl_name(combiner->acc));
      add_buffer_defines(d, "OUT", out);
      d.emplace_back("STORE_OUT(v)", combiner->store);
      add_buffer_defines(d, "IN", in);
      d.emplace_back("LOAD(x)", combiner->load);
      add_buffer_defines(d, "INIT", out);
      d.emplace_back("INIT_FROM_BUFFER", "1");
      d.emplace_back("IDENT", "init_value");
      d.emplace_back("COMBINE(a, b)", "nxv_combine(a, b)");
      key.generated = combiner->generated;
    } else {
      features.add_defines(d);
      add_window_defines(d, windows);
      d.emplace_back("VW", std::to_string(vw));
      if (vh > 1) d.emplace_back("VH", std::to_string(vh));
      if (vec_store) {
        d.emplace_back("VEC_STORE", "1");
        d.emplace_back("OUT_VEC", glsl_vec4_type(out));
        d.emplace_back("OUT_VALIGN", std::to_string(vec4_alignment(out)));
      }
      d.emplace_back("TILED", tiled ? "1" : "0");
      d.emplace_back("ACC", glsl_name(acc));
      add_buffer_defines(d, "OUT", out);
      d.emplace_back("STORE_OUT(v)", glsl_store(out));
      Fold fold = fold_for(fold_kind(op), acc);
      add_buffer_defines(d, "IN", in);
      d.emplace_back("LOAD(x)", glsl_load(in, acc));
      d.emplace_back("IDENT", fold.ident);
      // Float max/min: NaN propagates from either operand through one compare and a select
      // (NXV_FMAX takes two NaN tests and an add); ties keep the element, as NXV_FMAX does.
      bool floating = is_floating(acc);
      if (floating && op == OpId::window_max) fold.combine = "((((a) < (b)) || isnan(b)) ? (b) : (a))";
      if (floating && op == OpId::window_min) fold.combine = "((((a) > (b)) || isnan(b)) ? (b) : (a))";
      d.emplace_back("COMBINE(a, b)", fold.combine);
    }
    append_uses(key);
    return key;
  }

  // The folds on every type they take: an output per invocation, windows tiling the tensor,
  // four along the last axis, and for max and min four rows of four (stored four-wide where
  // the type has vectors). Window extents are those of 2x2 and 3x3 pooling.
  static std::vector<WindowVariant> declared(const DeviceInfo&) {
    std::vector<WindowVariant> all;
    for (OpId op : {OpId::window_sum, OpId::window_product, OpId::window_max, OpId::window_min})
      for (DType t : kAllDTypes) {
        bool extreme = op == OpId::window_max || op == OpId::window_min;
        if (extreme && is_complex(t)) continue;
        all.push_back({.op = op, .out = t, .in = t, .windows = {2, 2}});
        all.push_back({.op = op, .out = t, .in = t, .windows = {2, 2}, .tiled = true});
        all.push_back({.op = op, .out = t, .in = t, .windows = {3, 3}, .vw = 4});
        if (!extreme) continue;
        all.push_back({.op = op, .out = t, .in = t, .windows = {3, 3}, .vw = 4, .vh = 4});
        if (!glsl_vec4_type(t).empty() && dtype_size(t) >= 4)
          all.push_back({.op = op, .out = t, .in = t, .windows = {3, 3}, .vw = 4, .vh = 4, .vec_store = true});
      }
    return all;
  }
};

// A variant of window_scatter.comp (window_scatter_max/min): for each tensor position, the
// source values of the windows (extents `windows`) that select it.
struct WindowScatterVariant {
  static constexpr const char* kTemplate = "window_scatter";
  OpId op = OpId::window_scatter_max;
  DType out = DType::F32, t = DType::F32, src = DType::F32, init = DType::F32;
  std::vector<int64_t> windows;
  bool tiled = false;

  auto fields() const { return std::tie(op, out, t, src, init, windows, tiled); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    FeatureSet features;
    for (DType x : {t, src, init, out}) features.add_type(x);
    AccType acc = acc_of(out);
    add_acc_features(features, acc);
    auto& d = key.defines;
    features.add_defines(d);
    add_window_defines(d, windows);
    d.emplace_back("VW", "1");
    d.emplace_back("TILED", tiled ? "1" : "0");
    d.emplace_back("ACC", glsl_name(acc));
    add_buffer_defines(d, "OUT", out);
    d.emplace_back("STORE_OUT(v)", glsl_store(out));
    std::string tc = glsl_compute_type(t);
    d.emplace_back("TC", tc);
    add_buffer_defines(d, "T", t);
    d.emplace_back("LOAD_T(x)", glsl_load(t, tc));
    // Nx pads the tensor with the init value in the tensor's type.
    d.emplace_back("INIT_T(x)", glsl_load(t, tc) == tc + "(x)" ? tc + "(" + glsl_load(init, tc) + ")"
                                                                 : glsl_load(init, tc));
    add_buffer_defines(d, "SRC", src);
    d.emplace_back("LOAD_SRC(x)", glsl_load(src, acc));
    add_buffer_defines(d, "INIT", init);
    d.emplace_back("LOAD_INIT(x)", glsl_load(init, acc));
    d.emplace_back("SELECT(x, pick)", op == OpId::window_scatter_max ? "((x) >= (pick))" : "((x) <= (pick))");
    append_uses(key);
    return key;
  }

  // Both ops on every ordered type (all operands of it), 2x2 windows, tiling the tensor or not.
  static std::vector<WindowScatterVariant> declared(const DeviceInfo&) {
    std::vector<WindowScatterVariant> all;
    for (OpId op : {OpId::window_scatter_max, OpId::window_scatter_min})
      for (DType t : kAllDTypes)
        if (!is_complex(t))
          for (bool tiled : {false, true}) all.push_back({op, t, t, t, t, {2, 2}, tiled});
    return all;
  }
};

class WindowFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<WindowVariant>(out, info);
    nxv::declare_variants<WindowScatterVariant>(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId op, const AttrReader& r) const override {
    WindowAttrs a;
    if (op == OpId::window_reduce && r.has("combiner"))
      a.combiner = std::make_shared<const Combiner>(parse_combiner(r.atom("combiner")));
    a.dims = r.integers("window_dimensions");
    size_t rank = a.dims.size();
    a.strides = ones_if_absent(r, "strides", rank);
    a.dilations = ones_if_absent(r, "window_dilations", rank);
    if (r.has("padding")) {
      for (const auto& p : r.integer_lists("padding")) {
        if (p.size() != 2) throw Error(ErrorKind::InvalidArgument, "option padding: expected {low, high} per axis");
        a.padding.emplace_back(p[0], p[1]);
      }
    } else {
      a.padding.assign(rank, {0, 0});
    }
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    std::string name(op_info(c.op).name);
    if (c.attrs.empty()) return not_native(name + ": needs its options (window_dimensions)", ErrorKind::InvalidArgument);
    const auto& a = c.attrs.as<WindowAttrs>();
    const TensorSpec& in = c.inputs[0];
    size_t rank = in.shape.size();
    auto invalid = [&](const std::string& why) { return not_native(name + ": " + why, ErrorKind::InvalidArgument); };
    if (a.dims.size() != rank || a.strides.size() != rank || a.dilations.size() != rank || a.padding.size() != rank)
      return invalid("window options must give one value per axis");
    if (rank > NXV_WIN_MAX_RANK) return not_native(name + ": tensors of rank over 8 are not windowed natively");
    Shape windows(rank);
    for (size_t d = 0; d < rank; ++d) {
      if (a.dims[d] < 1 || a.strides[d] < 1 || a.dilations[d] < 1) return invalid("window sizes, strides and dilations must be positive");
      windows[d] = windows_along(in.shape[d], a.padding[d].first, a.padding[d].second, a.dims[d], a.strides[d],
                                 is_scatter(c.op) ? 1 : a.dilations[d]);
    }
    DType t = in.type, out = c.out.type;
    if (is_scatter(c.op)) {
      if (c.out.shape != in.shape) return invalid("the output has the tensor's shape");
      if (c.inputs[1].shape != windows) return invalid("the source needs one value per window");
      if (!c.inputs[2].shape.empty()) return invalid("the init value is a scalar");
      for (const auto& i : c.inputs)
        if (is_complex(i.type)) return invalid("complex numbers have no order");
      if (is_complex(out)) return invalid("complex numbers have no order");
    } else {
      if (c.out.shape != windows) return invalid("output shape does not match the windows");
      if (out != t) return invalid("the output type must be the input's");
      if (c.op == OpId::window_reduce) {
        if (!a.combiner) return invalid("needs its function traced (option combiner)");
        if (!c.inputs[1].shape.empty() || c.inputs[1].type != out)
          return invalid("the accumulator is a scalar of the output type");
        bool bad = false;
        std::string why = combiner_error(*a.combiner, out, c.device.has(kCapFloat64), bad);
        if (!why.empty()) return not_native(name + ": " + why, bad ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
      }
      if (is_complex(t) && (c.op == OpId::window_max || c.op == OpId::window_min))
        return invalid("complex numbers have no order");
    }
    uint64_t elements = uint64_t(std::max(shape_size(in.shape), shape_size(c.out.shape)));
    if (elements >= (1ull << 31)) return not_native(name + ": tensors over 2^31 elements are not windowed natively yet");
    FeatureSet features;
    for (const auto& i : c.inputs) features.add_type(i.type);
    features.add_type(out);
    add_acc_features(features, acc_of(out));
    if (c.op == OpId::window_reduce)
      features.merge(combiner_code(*a.combiner, out, c.device.has(kCapFloat64)).features);
    try {
      for (const auto& i : c.inputs) glsl_storage_type(i.type);
      glsl_storage_type(out);
      features.check(*c.device.impl().core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const auto& w = a.attrs.as<WindowAttrs>();
    const Tensor& in = a.inputs[0].tensor;
    bool scatter = is_scatter(a.op);
    Shape windows = scatter ? a.inputs[1].tensor.shape : a.out.shape;
    std::vector<Axis> axes = window_axes(w, in, a.out.shape, windows, scatter);
    WindowParams params{};
    auto src_pitch = [&] {
      std::vector<uint64_t> p(axes.size(), 1);
      for (size_t j = axes.size(); j-- > 1;) p[j - 1] = p[j] * axes[j].windows;
      return p;
    }();
    for (size_t j = 0; j < axes.size(); ++j) {
      const Axis& x = axes[j];
      params.out_shape[j] = uint32_t(x.out);
      fast_division(uint32_t(x.out), params.out_magic[j], params.out_shift[j]);
      params.in_shape[j] = uint32_t(x.in);
      params.in_stride[j] = int32_t(x.in_stride);
      params.stride[j] = uint32_t(x.stride);
      fast_division(uint32_t(x.stride), params.stride_magic[j], params.stride_shift[j]);
      params.pad_lo[j] = int32_t(x.pad_lo);
      params.dilation[j] = int32_t(x.dilation);
      params.windows[j] = uint32_t(x.windows);
      params.src_pitch[j] = uint32_t(src_pitch[j]);
    }
    // Four outputs per invocation along a last axis the window slides over one by one.
    const Axis& last = axes.back();
    uint32_t vw = !scatter && last.window > 1 && last.stride == 1 && last.dilation == 1 && last.out >= 4 ? 4 : 1;
    // ... and four rows of them along the axis before, where the window slides over it one by
    // one too and the fold's order does not matter (max, min): each input row's maxima are
    // folded once for the rows of outputs that take them.
    uint32_t vh = 1;
    if (vw > 1 && axes.size() >= 2 && (a.op == OpId::window_max || a.op == OpId::window_min)) {
      const Axis& pen = axes[axes.size() - 2];
      if (pen.window > 1 && pen.stride == 1 && pen.dilation == 1 && pen.out >= 4) vh = 4;
    }
    // Four-wide stores where the result's rows hold a multiple of 4 (every run whole and
    // 4-aligned); tuning's no_vec4 turns them off, as it does the other families' vectors.
    bool no_vec4 = tuning().no_vec4;
    bool vec_store = vh > 1 && last.out % 4 == 0 && !glsl_vec4_type(in.type).empty() && dtype_size(in.type) >= 4 &&
                     !no_vec4;
    // Windows that tile the tensor exactly: one invocation per window.
    bool tiled = scatter;
    for (const Axis& x : axes) tiled = tiled && x.stride == x.window && x.pad_lo == 0 && x.in == x.windows * x.stride;
    WindowPush push{};
    push.n = uint32_t(shape_size(a.out.shape));
    if (vw > 1) {
      push.last_extent = uint32_t(last.out);
      push.last_runs = uint32_t((last.out + vw - 1) / vw);
      push.n = uint32_t(shape_size(a.out.shape) / last.out) * push.last_runs;
    }
    if (vh > 1) {
      const Axis& pen = axes[axes.size() - 2];
      push.pen_extent = uint32_t(pen.out);
      push.pen_blocks = uint32_t((pen.out + vh - 1) / vh);
      push.n = uint32_t(shape_size(a.out.shape) / (last.out * pen.out)) * push.pen_blocks * push.last_runs;
    }
    if (tiled) {
      uint64_t pitch = 1;
      for (size_t j = axes.size(); j-- > 0;) {
        params.out_pitch[j] = uint32_t(pitch);
        pitch *= uint64_t(axes[j].out);
        params.out_shape[j] = uint32_t(axes[j].windows);
        fast_division(uint32_t(axes[j].windows), params.out_magic[j], params.out_shift[j]);
      }
      push.n = uint32_t(shape_size(windows));
    }
    DeviceImpl& impl = a.device.impl();
    std::vector<int64_t> extents;
    for (const Axis& x : axes) extents.push_back(x.window);
    const Kernel& kernel = [&]() -> const Kernel& {
      if (scatter)
        return impl.kernels.get(WindowScatterVariant{a.op, a.out.type, in.type, a.inputs[1].tensor.type,
                                                     a.inputs[2].tensor.type, extents, tiled});
      WindowVariant v{a.op, a.out.type, in.type, extents, vw, vh, vec_store, tiled};
      // The combiner's code is emitted once per function text (combiner_code).
      if (a.op == OpId::window_reduce) v.combiner = combiner_code(*w.combiner, a.out.type, a.device.has(kCapFloat64));
      return impl.kernels.get(v);
    }();
    uint32_t elem = uint32_t(dtype_size(in.type));
    std::vector<AddressPatch> patches{{offsetof(WindowPush, out_addr), {a.output_slot, 0}},
                                      {offsetof(WindowPush, in_addr), {a.inputs[0].slot, uint64_t(in.offset) * elem}}};
    // The scatter kernel reads the source row-major (one value per window, by pitch).
    LowerInput source = a.inputs[scatter ? 1 : 0];
    if (a.op == OpId::window_reduce) {
      const Tensor& init = a.inputs[1].tensor;
      patches.push_back({offsetof(WindowPush, init_addr), {a.inputs[1].slot, uint64_t(init.offset) * dtype_size(init.type)}});
    }
    if (scatter) {
      if (source.tensor.buffer && !source.tensor.is_contiguous()) {
        Tensor dense = empty(a.device, source.tensor.type, source.tensor.shape);
        uint32_t slot = a.builder.bind(dense.buffer);
        append_copy(a.device, a.builder, source.tensor, source.slot, dense, slot);
        source = {dense, slot};
      }
      for (size_t k = 1; k <= 2; ++k) {
        const LowerInput& input = k == 1 ? source : a.inputs[k];
        const Tensor& t = input.tensor;
        // An empty source is never read: any bound buffer serves as its address.
        BufferRef ref = t.buffer ? BufferRef{input.slot, uint64_t(t.offset) * dtype_size(t.type)}
                                 : BufferRef{a.output_slot, 0};
        patches.push_back({uint32_t(k == 1 ? offsetof(WindowPush, source_addr) : offsetof(WindowPush, init_addr)), ref});
      }
    }
    std::array<uint32_t, 3> grid{workgroups_for(*impl.core, push.n, kWorkgroupSize), 1, 1};
    Launch& l = a.builder.launch(kernel, grid, push, std::move(patches));
    a.builder.params(l, params, offsetof(WindowPush, params_addr), {});
    for (const auto& i : a.inputs)
      if (i.tensor.buffer) a.builder.use(l, i.slot, Access::Read);
    if (scatter && source.tensor.buffer) a.builder.use(l, source.slot, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
  }


};

}  // namespace

const Family& window_family() {
  static const WindowFamily family;
  return family;
}

}  // namespace nxv
