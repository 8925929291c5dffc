// The conv family: Nx's conv/4 with every option (strides, padding, input and kernel
// dilation, feature and batch groups, input/kernel/output permutations) on every type, as an
// implicit GEMM on dot's tile core (conv_kernels.hpp, conv_gemm.comp): per group, rows are
// (batch item, output position), columns the group's filters, and k = (kernel position,
// channel) gathered from the input on the fly. The input is read in place through its strides
// (any permutation); the kernel where its (kernel position, channel) axes collapse to one
// stride, else copied to [group, kernel position, channel, filter] first in the same
// executable. 3 x 3 convs with unit strides take Winograd's algorithm on GPUs
// (conv_winograd.hpp). Accumulation as dot's: integers in the output's compute type (Nx's
// wrap-around), f16/bf16/f8 in f32 rounded once, f32 in f32 with fma, f64 in double, complex
// in pairs.
// With an epilogue (compiled graphs: graph/epilogue_fusion.hpp) the kernels apply an elementwise
// chain where they store (conv_epilogue.hpp); the op's output type is then the chain's.
#include <cstdlib>
#include <numeric>
#include <optional>

#include "device/device_impl.hpp"
#include "kernels/glsl_types.hpp"
#include "memory/copy.hpp"
#include "ops/conv/conv_attrs.hpp"
#include "ops/conv/conv_epilogue.hpp"
#include "ops/conv/conv_im2col.hpp"
#include "ops/conv/conv_kernels.hpp"
#include "ops/conv/conv_plan.hpp"
#include "ops/conv/conv_push.h"
#include "ops/conv/conv_winograd.hpp"
#include "ops/dot/dot_plan.hpp"
#include "ops/family.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr int64_t kMaxIndex = int64_t(1) << 31;
// Kernel positions the parameter block's table holds at most (NR + 1 ints each).
constexpr int64_t kMaxKernelPositions = int64_t(1) << 22;

std::vector<int64_t> integers_or_empty(const AttrReader& r, const char* key) {
  return r.has(key) ? r.integers(key) : std::vector<int64_t>{};
}

// The input's values convert to the output's kind as Nx promotes: no complex into a real
// output, no float into an integer one.
bool promotes_to(DType in, DType out) {
  if (is_complex(in)) return is_complex(out);
  if (is_float(in)) return is_float(out) || is_complex(out);
  return true;
}

class ConvFamily final : public StoreEpilogueFamily<ConvAttrs> {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    declare_conv_kernel_variants(out, info);
    declare_winograd_variants(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId, const AttrReader& r) const override {
    ConvAttrs a;
    a.strides = integers_or_empty(r, "strides");
    if (r.has("padding"))
      for (const auto& p : r.integer_lists("padding")) {
        if (p.size() != 2) throw Error(ErrorKind::InvalidArgument, "option padding: expected {low, high} per axis");
        a.padding.emplace_back(p[0], p[1]);
      }
    a.input_dilation = integers_or_empty(r, "input_dilation");
    a.kernel_dilation = integers_or_empty(r, "kernel_dilation");
    if (r.has("feature_group_size")) a.feature_group_size = r.integer("feature_group_size");
    if (r.has("batch_group_size")) a.batch_group_size = r.integer("batch_group_size");
    a.input_permutation = integers_or_empty(r, "input_permutation");
    a.kernel_permutation = integers_or_empty(r, "kernel_permutation");
    a.output_permutation = integers_or_empty(r, "output_permutation");
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    auto invalid = [](const std::string& why) { return not_native("conv: " + why, ErrorKind::InvalidArgument); };
    if (c.attrs.empty()) return invalid("needs its options");
    const auto& attrs = c.attrs.as<ConvAttrs>();
    if (!attrs.epilogue && c.inputs.size() != 2) return invalid("takes an input and a kernel");
    if (c.inputs.size() < 2) return invalid("takes an input and a kernel");
    const TensorSpec& in = c.inputs[0];
    const TensorSpec& ker = c.inputs[1];
    ConvPlan plan = plan_conv(in.shape, ker.shape, attrs);
    if (!plan.error.empty()) return invalid(plan.error);
    const ConvGeometry& g = plan.geometry;
    if (c.out.shape != conv_output_shape(g, plan.attrs))
      return invalid("the output shape is not the convolution's");
    DType out = attrs.epilogue ? attrs.product : c.out.type;  // the conv's own type
    if (!promotes_to(in.type, out) || !promotes_to(ker.type, out))
      return invalid("the output type " + std::string(dtype_name(out)) + " cannot hold the inputs' products");
    if (g.spatial > NXV_CONV_MAX_SPATIAL)
      return not_native("conv: over " + std::to_string(NXV_CONV_MAX_SPATIAL) + " spatial axes are not convolved natively");
    const DeviceCore& core = *c.device.impl().core;
    for (const Shape* s : {&in.shape, &ker.shape, &c.out.shape}) {
      DType t = s == &in.shape ? in.type : s == &ker.shape ? ker.type : out;
      if (s == &c.out.shape && dtype_size(c.out.type) > dtype_size(t)) t = c.out.type;  // the epilogue's
      uint64_t n = uint64_t(shape_size(*s));
      if (n >= uint64_t(kMaxIndex) || n * dtype_size(t) > core.chunk_bytes())
        return not_native("conv: operands over 2^31 elements or one buffer chunk are not convolved natively yet");
    }
    // Positions in the dilated, padded input are 32-bit signed integers in the kernel.
    for (size_t d = 0; d < g.spatial; ++d) {
      const auto& a = plan.attrs;
      int64_t reach = dilated_extent(g.in_spatial[d], a.input_dilation[d]) + std::abs(a.padding[d].first) +
                      std::abs(a.padding[d].second) + dilated_extent(g.kernel_spatial[d], a.kernel_dilation[d]) +
                      a.strides[d] * g.out_spatial[d];
      if (reach >= (int64_t(1) << 30)) return not_native("conv: spatial extents, paddings or dilations over 2^30");
    }
    if (g.kernel_positions > kMaxKernelPositions)
      return not_native("conv: kernels over 2^22 spatial positions are not convolved natively");
    AccType acc = dot_acc_type(out);
    try {
      for (DType t : {in.type, ker.type, out}) glsl_storage_type(t);
      fold_features({in.type, ker.type, out}, acc).check(core, "conv");
    } catch (const Error& e) {
      return not_native(e.what());
    }
    if (attrs.epilogue) {
      bool bad = false;
      if (std::string why = conv_epilogue_error(c, attrs, bad); !why.empty())
        return bad ? not_native(why, ErrorKind::InvalidArgument) : not_native(why);
    }
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const Tensor& input = a.inputs[0].tensor;
    const Tensor& kernel = a.inputs[1].tensor;
    const auto& at = a.attrs.as<ConvAttrs>();
    ConvPlan plan = plan_conv(input.shape, kernel.shape, at);
    if (a.output.size() == 0) return;
    std::optional<StoreEpilogue> epilogue;
    if (at.epilogue) epilogue = make_conv_epilogue(a, at);
    // The canonical axes' strides in the (row-major) result: axis j is output_permutation[j].
    std::vector<int64_t> os = row_major_strides(a.out.shape), out_strides;
    for (int64_t axis : plan.attrs.output_permutation) out_strides.push_back(os[size_t(axis)]);
    ConvInput in_a = input_operand(a, plan);
    if (append_conv_winograd(a, plan, in_a, epilogue ? &*epilogue : nullptr)) return;
    GemmOperand kernel_b = kernel_operand(a, plan);
    if (append_conv_im2col_gemm(a, plan, in_a, kernel_b, epilogue ? &*epilogue : nullptr)) return;
    append_conv_gemm(a.device.impl(), a.builder, at.epilogue ? at.product : a.out.type, plan, in_a, kernel_b,
                     {a.output_slot, 0}, out_strides, epilogue ? &*epilogue : nullptr);
  }

 private:
  // The input's canonical view [batch, channels, spatial...], read in place unless an index
  // would not fit 31 bits (then a row-major copy of it).
  static ConvInput input_operand(const LowerArgs& a, const ConvPlan& plan) {
    const Tensor& t = a.inputs[0].tensor;
    Tensor view = transpose_view(t, plan.attrs.input_permutation);
    // An input never read (no k) may be empty: any bound buffer serves.
    if (t.size() == 0 || plan.geometry.k() == 0) return {{a.output_slot, 0}, t.type, view.strides};
    if (max_element_index(view.shape, view.strides, view.offset) < kMaxIndex)
      return {{a.inputs[0].slot, uint64_t(view.offset) * dtype_size(t.type)}, t.type, view.strides};
    Tensor copy = empty(a.device, t.type, view.shape);
    uint32_t slot = a.builder.bind(copy.buffer);
    append_copy(a.device, a.builder, view, a.inputs[0].slot, copy, slot);
    return {{slot, 0}, t.type, copy.strides};
  }

  // The kernel as B: [group, k, n] with k = (kernel position, channel) and n the group's
  // filters, as strides where those axes collapse (HWIO and OHWI kernels do), else a copy.
  static GemmOperand kernel_operand(const LowerArgs& a, const ConvPlan& plan) {
    const Tensor& t = a.inputs[1].tensor;
    const ConvGeometry& g = plan.geometry;
    if (t.size() == 0 || g.k() == 0) return {{a.output_slot, 0}, t.type, {0, 0, 0}};
    Tensor view = transpose_view(t, plan.attrs.kernel_permutation);  // [filters, ci, spatial...]
    // Filters split into [group, filter in group].
    Tensor split = view;
    split.shape.insert(split.shape.begin(), g.groups);
    split.shape[1] = g.group_filters;
    split.strides.insert(split.strides.begin(), view.strides[0] * g.group_filters);
    OperandAxes axes;
    axes.order = {0};
    for (size_t d = 0; d < g.spatial; ++d) axes.order.push_back(int64_t(3 + d));
    axes.order.push_back(2);
    axes.order.push_back(1);
    axes.batch = 1;
    axes.first = g.spatial + 1;
    uint32_t elem = uint32_t(dtype_size(t.type));
    auto strides = collapse_groups(split.shape, split.strides, axes);
    if (strides && max_element_index(split.shape, split.strides, split.offset) < kMaxIndex)
      return {{a.inputs[1].slot, uint64_t(split.offset) * elem}, t.type, *strides};
    Tensor ordered = transpose_view(split, axes.order);
    Tensor copy = empty(a.device, t.type, ordered.shape);
    uint32_t slot = a.builder.bind(copy.buffer);
    append_copy(a.device, a.builder, ordered, a.inputs[1].slot, copy, slot);
    OperandAxes in_order = axes;
    std::iota(in_order.order.begin(), in_order.order.end(), int64_t(0));
    return {{slot, 0}, t.type, *collapse_groups(copy.shape, copy.strides, in_order)};
  }
};

}  // namespace

const Family& conv_family() {
  static const ConvFamily family;
  return family;
}

}  // namespace nxv
