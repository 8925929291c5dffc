// The shape family: reshape, squeeze, broadcast, slice and transpose where it only moves
// size-1 axes are views (no device work); transpose, reverse, pad, concatenate, stack,
// put_slice, iota, eye and constant write a new row-major tensor. Every Nx type, any layout.
#include <algorithm>
#include <string>

#include "device/device_impl.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/shape/dynamic_slice_push.h"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr size_t kMaxGatherRank = 8;  // pad and reverse (pad_push.h)

bool creates(OpId op) { return op == OpId::iota || op == OpId::eye || op == OpId::constant; }

std::string shape_text(const Shape& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

// Nx clamps slice starts into range.
std::vector<int64_t> clamped_starts(const std::vector<int64_t>& starts, const Shape& in, const Shape& lengths) {
  std::vector<int64_t> out(starts.size());
  for (size_t d = 0; d < starts.size(); ++d) out[d] = std::clamp<int64_t>(starts[d], 0, std::max<int64_t>(0, in[d] - lengths[d]));
  return out;
}

Tensor squeezed(const Tensor& t, const std::vector<int64_t>& axes) {
  Tensor out = t;
  out.shape.clear(), out.strides.clear();
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end()) continue;
    out.shape.push_back(t.shape[d]);
    out.strides.push_back(t.strides[d]);
  }
  return out;
}

// Ops called without options (reshape, eye from C++) get the defaults.
const ShapeAttrs& attrs_of(const Attrs& attrs) {
  static const ShapeAttrs none;
  return attrs.empty() ? none : attrs.as<ShapeAttrs>();
}

class ShapeFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    declare_transpose_variants(out, info);
    declare_pad_variants(out, info);
    declare_dynamic_slice_variants(out, info);
    declare_index_fill_variants(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId op, const AttrReader& r) const override {
    ShapeAttrs a;
    switch (op) {
      case OpId::squeeze:
      case OpId::transpose:
      case OpId::reverse:
      case OpId::broadcast:
        if (r.has("axes")) a.axes = r.integers("axes");
        break;
      case OpId::slice:
        a.starts = r.integers("start_indices");
        a.lengths = r.integers("lengths");
        a.steps = r.has("strides") ? r.integers("strides") : std::vector<int64_t>(a.starts.size(), 1);
        if (r.has("dynamic_axes")) a.dynamic_axes = r.integers("dynamic_axes");
        break;
      case OpId::put_slice:
        a.starts = r.integers("start_indices");
        if (r.has("dynamic_axes")) a.dynamic_axes = r.integers("dynamic_axes");
        break;
      case OpId::pad:
        for (const auto& p : r.integer_lists("padding_config")) {
          if (p.size() != 3)
            throw Error(ErrorKind::InvalidArgument, "option padding_config: expected {low, high, interior} per axis");
          a.padding.push_back({p[0], p[1], p[2]});
        }
        break;
      case OpId::concatenate:
      case OpId::stack:
        a.axis = r.integer("axis");
        break;
      case OpId::iota:
        if (r.has("axis")) a.axis = r.integer("axis");
        break;
      case OpId::constant:
        a.value = r.number("value");
        break;
      default:
        break;
    }
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    std::string name(op_info(c.op).name);
    auto invalid = [&](const std::string& why) { return not_native(name + ": " + why, ErrorKind::InvalidArgument); };
    const ShapeAttrs& a = attrs_of(c.attrs);
    const Shape& out = c.out.shape;
    if (!creates(c.op) && c.inputs.empty()) return invalid("needs a tensor");
    const TensorSpec* in = c.inputs.empty() ? nullptr : &c.inputs[0];
    size_t rank = in ? in->shape.size() : out.size();
    // slice and put_slice take their dynamic starts after the data inputs.
    size_t data_count = c.inputs.size();
    if (c.op == OpId::slice || c.op == OpId::put_slice) {
      size_t wanted = (c.op == OpId::slice ? 1 : 2) + a.dynamic_axes.size();
      if (c.inputs.size() != wanted) return invalid("takes its tensor(s) and one start tensor per dynamic axis");
      data_count = wanted - a.dynamic_axes.size();
      for (size_t j = 0; j < a.dynamic_axes.size(); ++j) {
        int64_t ax = a.dynamic_axes[j];
        if (ax < 0 || ax >= int64_t(rank) || (j > 0 && ax <= a.dynamic_axes[j - 1]))
          return invalid("dynamic_axes must be increasing axes");
        const TensorSpec& s = c.inputs[data_count + j];
        if (!is_integer(s.type) || shape_size(s.shape) != 1) return invalid("a start index is an integer scalar");
      }
      if (!a.dynamic_axes.empty() && rank > NXV_DYNAMIC_SLICE_MAX_RANK)
        return not_native(name + ": dynamic starts on tensors of rank over 8");
    }
    std::span<const TensorSpec> data = c.inputs.subspan(0, data_count);
    bool same_type = true;
    for (const auto& i : data) same_type = same_type && i.type == c.out.type;
    switch (c.op) {
      case OpId::reshape:
        if (shape_size(out) != shape_size(in->shape)) return invalid("cannot reshape " + shape_text(in->shape) + " to " + shape_text(out));
        break;
      case OpId::squeeze: {
        for (int64_t ax : a.axes)
          if (ax < 0 || ax >= int64_t(rank) || in->shape[ax] != 1) return invalid("can only squeeze axes of size 1");
        Shape kept;
        for (size_t d = 0; d < rank; ++d)
          if (std::find(a.axes.begin(), a.axes.end(), int64_t(d)) == a.axes.end()) kept.push_back(in->shape[d]);
        if (kept != out) return invalid("the output shape is not the squeezed shape");
        break;
      }
      case OpId::broadcast: {
        if (!a.axes.empty() && a.axes.size() != rank) return invalid("broadcast axes do not match the input's rank");
        for (size_t d = 0; d < a.axes.size(); ++d) {
          int64_t ax = a.axes[d];
          if (ax < 0 || ax >= int64_t(out.size()) || (in->shape[d] != 1 && in->shape[d] != out[ax]))
            return invalid("cannot broadcast " + shape_text(in->shape) + " to " + shape_text(out));
        }
        if (a.axes.empty() && rank > out.size()) return invalid("cannot broadcast to a lower rank");
        break;
      }
      case OpId::transpose:
      case OpId::reverse: {
        std::vector<bool> seen(rank, false);
        for (int64_t ax : a.axes) {
          if (ax < 0 || ax >= int64_t(rank) || seen[ax]) return invalid("invalid axes");
          seen[ax] = true;
        }
        if (c.op == OpId::transpose && a.axes.size() != rank) return invalid("transpose axes do not match the rank");
        Shape expected = in->shape;
        if (c.op == OpId::transpose)
          for (size_t d = 0; d < rank; ++d) expected[d] = in->shape[a.axes[d]];
        if (expected != out) return invalid("the output shape does not match");
        if (c.op == OpId::reverse && rank > kMaxGatherRank) return not_native(name + ": tensors of rank over 8");
        break;
      }
      case OpId::slice: {
        if (a.starts.size() != rank || a.lengths.size() != rank || a.steps.size() != rank)
          return invalid("start indices, lengths and strides must match the rank");
        for (size_t d = 0; d < rank; ++d) {
          if (a.steps[d] < 1 || a.lengths[d] < 0 || a.lengths[d] > in->shape[d]) return invalid("slice out of bounds");
          if ((a.lengths[d] + a.steps[d] - 1) / a.steps[d] != out[d]) return invalid("the output shape does not match");
        }
        break;
      }
      case OpId::put_slice: {
        const TensorSpec& s = c.inputs[1];
        if (a.starts.size() != rank || s.shape.size() != rank || out != in->shape) return invalid("shapes do not match");
        for (size_t d = 0; d < rank; ++d)
          if (s.shape[d] > in->shape[d]) return invalid("the slice is larger than the tensor");
        break;
      }
      case OpId::pad: {
        if (!c.inputs[1].shape.empty()) return invalid("the pad value is a scalar");
        if (a.padding.size() != rank) return invalid("padding_config must give one entry per axis");
        for (size_t d = 0; d < rank; ++d) {
          const PadAxis& p = a.padding[d];
          if (p.interior < 0) return invalid("interior padding must be non-negative");
          int64_t grown = in->shape[d] == 0 ? 0 : in->shape[d] + (in->shape[d] - 1) * p.interior;
          if (std::max<int64_t>(0, grown + p.low + p.high) != out[d]) return invalid("the output shape does not match");
        }
        if (rank > kMaxGatherRank) return not_native(name + ": tensors of rank over 8");
        break;
      }
      case OpId::concatenate:
      case OpId::stack: {
        if (!a.axis) return invalid("needs its axis");
        int64_t ax = *a.axis;
        if (ax < 0 || ax >= int64_t(out.size())) return invalid("axis out of range");
        int64_t along = 0;
        for (const auto& i : c.inputs) {
          Shape expected = out;
          if (c.op == OpId::stack) {
            expected.erase(expected.begin() + ax);
            along += 1;
          } else {
            if (i.shape.size() != out.size()) return invalid("inputs must have the output's rank");
            expected[ax] = i.shape[ax];
            along += i.shape[ax];
          }
          if (i.shape != expected) return invalid("input shapes do not match the output");
        }
        if (along != out[ax]) return invalid("the output shape does not match");
        break;
      }
      case OpId::iota:
        if (a.axis && (*a.axis < 0 || *a.axis >= int64_t(out.size()))) return invalid("axis out of range");
        break;
      case OpId::eye:
        if (out.size() < 2) return invalid("eye needs rank 2 or more");
        break;
      default:
        break;
    }
    bool converts = c.op == OpId::pad || c.op == OpId::concatenate || c.op == OpId::stack || c.op == OpId::put_slice;
    if (!same_type && !converts) return invalid("the output type must be the input's");
    if (shape_size(out) >= (int64_t(1) << 32)) return not_native(name + ": tensors of 2^32 elements or more");
    if (!a.dynamic_axes.empty()) {
      // The sliced tensor through a table of its chunks (up to NXV_DYNAMIC_SLICE_MAX_CHUNKS);
      // put_slice's update from one base address.
      const Shape& whole = c.op == OpId::slice ? in->shape : out;
      uint64_t chunk = c.device.impl().core->chunk_bytes(), e = dtype_size(c.out.type);
      if (uint64_t(shape_size(whole)) * e > chunk * NXV_DYNAMIC_SLICE_MAX_CHUNKS || shape_size(whole) >= (int64_t(1) << 32))
        return not_native(name + ": dynamic starts into a tensor over " + std::to_string(NXV_DYNAMIC_SLICE_MAX_CHUNKS) +
                          " buffer chunks or 2^32 elements");
      if (c.op == OpId::put_slice && uint64_t(shape_size(c.inputs[1].shape)) * e > chunk)
        return not_native(name + ": an update over one buffer chunk with dynamic starts");
    }
    FeatureSet features;
    features.add_type(c.out.type);
    for (const auto& i : data) features.add_type(i.type);
    try {
      features.check(*c.device.impl().core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    // Conversions and creation go through the elementwise family's as_type.
    auto as_type = [&](DType from) {
      TensorSpec spec = contiguous_spec(from, {});
      return check_op(c.device, OpId::as_type, OutSpec{c.out.type, {}}, std::span<const TensorSpec>(&spec, 1));
    };
    for (const auto& i : data)
      if (i.type != c.out.type)
        if (Support s = as_type(i.type); !s) return s;
    if (c.op == OpId::iota || c.op == OpId::eye)
      if (Support s = as_type(DType::U32); !s) return s;
    if (c.op == OpId::constant) {
      bool is_complex_value = a.value.kind == AttrNumber::Kind::Complex;
      if (is_complex_value && !is_complex(c.out.type)) return invalid("a complex constant needs a complex type");
      if (Support s = as_type(constant_source_type(a.value)); !s) return s;
    }
    return {};
  }

  std::optional<Tensor> view_result(OpId op, const OutSpec& out, const std::vector<Tensor>& in,
                                    const Attrs& attrs) const override {
    const ShapeAttrs& a = attrs_of(attrs);
    switch (op) {
      case OpId::reshape:
        if (in[0].is_contiguous()) return reshape_view(in[0], out.shape);
        return std::nullopt;
      case OpId::squeeze:
        return squeezed(in[0], a.axes);
      case OpId::broadcast:
        return broadcast_view(in[0], out.shape, a.axes);
      case OpId::slice:
        if (!a.dynamic_axes.empty()) return std::nullopt;
        // Nx's lengths are extents in the input; the view takes counts (the output's shape).
        return slice_view(in[0], clamped_starts(a.starts, in[0].shape, a.lengths), out.shape, a.steps);
      case OpId::pad:
        // No padding: the input itself.
        if (in[0].type != out.type || in[0].shape != out.shape) return std::nullopt;
        for (const PadAxis& p : a.padding)
          if (p.low || p.high || p.interior) return std::nullopt;
        return in[0];
      case OpId::transpose: {
        Tensor v = transpose_view(in[0], a.axes);
        if (v.is_contiguous()) return v;
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  // slice and put_slice whose tensor starts are constants (grad's put_slice, an index
  // computed from literals) take them as static starts: a slice becomes a view. put_slice into
  // a tensor that a constant fills (grad's put_slice into zeros) is a pad of the slice with
  // that constant: one kernel instead of a fill and a copy, the same values converted the same
  // way.
  std::optional<uint32_t> append_simplified(const GraphNode& n, const Graph& graph, std::span<const uint32_t> inputs,
                                            Graph& out, const Device&) const override {
    if ((n.op != OpId::put_slice && n.op != OpId::slice) || n.attrs.empty()) return std::nullopt;
    const size_t data_inputs = n.op == OpId::put_slice ? 2 : 1;
    ShapeAttrs a = attrs_of(n.attrs);
    if (n.inputs.size() != data_inputs + a.dynamic_axes.size()) return std::nullopt;
    auto producer = [&](uint32_t v) -> const GraphNode* {
      return v < graph.input_count() ? nullptr : &graph.nodes()[v - graph.input_count()];
    };
    for (size_t i = 0; i < a.dynamic_axes.size(); ++i) {
      const GraphNode* start = producer(n.inputs[data_inputs + i]);
      if (!start || start->op != OpId::constant || start->attrs.empty()) return std::nullopt;
      const AttrNumber& v = attrs_of(start->attrs).value;
      size_t axis = size_t(a.dynamic_axes[i]);
      if (axis >= a.starts.size()) return std::nullopt;
      if (v.kind == AttrNumber::Kind::Int) a.starts[axis] = v.i;
      else if (v.kind == AttrNumber::Kind::UInt) a.starts[axis] = int64_t(std::min<uint64_t>(v.u, INT64_MAX));
      else return std::nullopt;
    }
    const GraphNode* fill = producer(n.inputs[0]);
    bool into_fill = n.op == OpId::put_slice && fill && fill->op == OpId::constant && !fill->attrs.empty() &&
                     n.out.shape.size() <= kMaxGatherRank;
    if (a.dynamic_axes.empty() && !into_fill) return std::nullopt;
    a.dynamic_axes.clear();
    std::vector<uint32_t> data(inputs.begin(), inputs.begin() + data_inputs);
    if (!into_fill) return out.add(n.op, n.out, std::move(data), Attrs::of(std::move(a)));
    const Shape& slice = graph.value(n.inputs[1]).shape;
    if (a.starts.size() != n.out.shape.size() || slice.size() != n.out.shape.size()) return std::nullopt;
    ShapeAttrs pad;
    for (size_t d = 0; d < slice.size(); ++d) {
      if (slice[d] > n.out.shape[d]) return std::nullopt;
      int64_t low = std::clamp<int64_t>(a.starts[d], 0, n.out.shape[d] - slice[d]);
      pad.padding.push_back({low, n.out.shape[d] - slice[d] - low, 0});
    }
    uint32_t value = out.add(OpId::constant, OutSpec{fill->out.type, {}}, {}, fill->attrs);
    // Converted as put_slice converts its tensor (a value known when the program compiles).
    if (fill->out.type != n.out.type) value = out.add(OpId::as_type, OutSpec{n.out.type, {}}, {value});
    return out.add(OpId::pad, n.out, {data[1], value}, Attrs::of(std::move(pad)));
  }

  // A constant is pointwise: a chain constant of its type where the host converts its value
  // exactly (chain_constant_literal), else one of its source type and an as_type step.
  bool pointwise(const GraphNode& n, const Graph&) const override {
    if (n.op != OpId::constant || n.attrs.empty()) return false;
    const AttrNumber& v = attrs_of(n.attrs).value;
    return chain_constant_literal(n.out.type, v) ||
           (is_float(n.out.type) && dtype_size(n.out.type) <= 2 && chain_constant_literal(constant_source_type(v), v));
  }

  std::optional<ChainOperand> append_pointwise_steps(const GraphNode& n, const std::vector<ChainOperand>&,
                                                     ElementwiseChain& chain) const override {
    const AttrNumber& v = attrs_of(n.attrs).value;
    bool direct = chain_constant_literal(n.out.type, v).has_value();
    chain.constants.push_back({direct ? n.out.type : constant_source_type(v), v});
    ChainOperand k{ChainOperand::From::Constant, uint32_t(chain.constants.size() - 1)};
    if (direct) return k;
    chain.steps.push_back({OpId::as_type, n.out.type, {k}});
    return ChainOperand{ChainOperand::From::Step, uint32_t(chain.steps.size() - 1)};
  }

  std::optional<std::vector<int64_t>> permutation(const GraphNode& n) const override {
    if (n.op != OpId::transpose || n.attrs.empty()) return std::nullopt;
    return attrs_of(n.attrs).axes;
  }

  void lower(const LowerArgs& a) const override {
    const ShapeAttrs& attrs = attrs_of(a.attrs);
    switch (a.op) {
      case OpId::reshape: {
        const Tensor& in = a.inputs[0].tensor;
        Tensor target = a.output;
        target.shape = in.shape;
        target.strides = row_major_strides(in.shape);
        append_materialize(a.device, a.builder, in, a.inputs[0].slot, target, a.output_slot);
        return;
      }
      case OpId::transpose:
        append_materialize(a.device, a.builder, transpose_view(a.inputs[0].tensor, attrs.axes), a.inputs[0].slot,
                           a.output, a.output_slot);
        return;
      case OpId::pad: return lower_pad(a, attrs);
      case OpId::reverse: return lower_reverse(a, attrs);
      case OpId::concatenate:
      case OpId::stack: return lower_join(a, attrs);
      case OpId::slice: return lower_dynamic_slice(a, attrs);
      case OpId::put_slice:
        if (!attrs.dynamic_axes.empty()) return lower_dynamic_put_slice(a, attrs);
        return lower_put_slice(a, attrs);
      case OpId::iota:
      case OpId::eye:
      case OpId::constant: return lower_creation(a, attrs);
      default:
        throw Error(ErrorKind::Unsupported, std::string(op_info(a.op).name) + " has no lowering in the shape family");
    }
  }
};

}  // namespace

const Family& shape_family() {
  static const ShapeFamily family;
  return family;
}

}  // namespace nxv
