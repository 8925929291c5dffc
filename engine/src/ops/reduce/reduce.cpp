// The reduce family: sum, product, reduce_max, reduce_min, all, any and reduce/5 (a traced
// function: combiner.hpp) over any set of axes, and argmax/argmin along one axis, on every Nx type, any layout. One kernel template
// (reduce.comp) folds rows of [outer, reduced, inner]; long rows that would leave the device
// idle are cut into chunks whose partial results a second pass folds (reduce_plan.cpp).
// f16/bf16/f8 sums and products accumulate in f32, integers in the output type (Nx's
// wrap-around); argmax/argmin keep indices and compare values as Nx does (NaN last-wins).
#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "memory/copy.hpp"
#include "ops/elementwise/offset_epilogue.hpp"
#include "ops/family.hpp"
#include "ops/reduce/combiner.hpp"
#include "ops/reduce/folds.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/reduce/reduce_plan.hpp"
#include "ops/elementwise/offset_epilogue.h"
#include "ops/reduce/reduce_prologue.h"
#include "ops/reduce/reduce_prologue.hpp"
#include "ops/reduce/reduce_push.h"
#include "ops/reduce/scan.hpp"

namespace nxv {

FoldKind fold_kind(OpId op) {
  switch (op) {
    case OpId::sum: return FoldKind::Sum;
    case OpId::product: return FoldKind::Product;
    case OpId::reduce_min: case OpId::argmin: return FoldKind::Min;
    case OpId::all: return FoldKind::All;
    case OpId::any: return FoldKind::Any;
    default: return FoldKind::Max;
  }
}

std::vector<bool> reduced_axes(OpId op, const Attrs& attrs, size_t rank) {
  std::vector<bool> flags(rank, false);
  if ((op == OpId::argmax || op == OpId::argmin)) {
    const auto& a = attrs.as<ArgReduceAttrs>();
    if (a.axis < 0) flags.assign(rank, true);
    else flags[size_t(a.axis)] = true;
  } else {
    const auto& a = attrs.as<ReduceAttrs>();
    if (a.all_axes) flags.assign(rank, true);
    for (int64_t x : a.axes) flags[size_t(x)] = true;
  }
  return flags;
}

namespace {

constexpr uint32_t kWorkgroupSize = 256;

bool is_arg(OpId op) { return op == OpId::argmax || op == OpId::argmin; }
bool is_extreme(OpId op) { return op == OpId::reduce_max || op == OpId::reduce_min || is_arg(op); }
bool is_logical(OpId op) { return op == OpId::all || op == OpId::any; }
bool is_int(DType t) { return !is_float(t) && !is_complex(t); }
// The reductions whose final pass stores through an epilogue.
bool folds_values(OpId op) {
  return op == OpId::sum || op == OpId::product || op == OpId::reduce_max || op == OpId::reduce_min;
}

// Where a pass with a prologue and an epilogue finds the epilogue's parameters in its block
// (std430 places a struct member at its alignment, 8 here, as C++ does).
struct FusedParams {
  ReducePrologueParams pro;
  OffsetEpilogueParams epi;
};
constexpr uint32_t kFusedEpilogueOffset = offsetof(FusedParams, epi);
static_assert(kFusedEpilogueOffset == sizeof(ReducePrologueParams));

AccType acc_type(OpId op, DType out, DType in) { return fold_acc_type(fold_kind(op), out, in); }

struct PassKind {
  bool from_partials = false;
  bool final = true;
  bool vec4 = false;      // dense rows of the tensor, read four-wide
  bool subgroup = false;  // the group combines by subgroup shuffles first
  bool lanes_apart = false;  // the group's invocations sit WG / TPR apart (ReducePass::lanes_apart)
  auto fields() const { return std::tie(from_partials, final, vec4, subgroup, lanes_apart); }
};

// What a graph's prologue chain adds to the first pass's kernel.
struct ReducePrologueCode {
  std::string generated;
  Defines defines;
  FeatureSet features;
  auto fields() const { return std::tie(generated, defines, features); }
};

KernelKey reduce_kernel_key(OpId op, DType out, DType in, bool tie_high, uint32_t tpr, uint32_t wg, PassKind pass,
                            const CombinerCode* combiner, const ReducePrologueCode* prologue) {
  KernelKey key;
  key.name = "reduce";
  key.workgroup_size = wg;
  AccType acc = combiner ? combiner->acc : acc_type(op, out, in);
  auto& d = key.defines;
  if (combiner) {
    combiner->features.add_defines(d);
    d.insert(d.end(), combiner->defines.begin(), combiner->defines.end());
    d.emplace_back("COMBINER", "1");
    key.generated = combiner->generated;
  } else if (prologue) {
    FeatureSet f = fold_features({in, out}, acc);
    f.merge(prologue->features);
    f.add_defines(d);
    d.insert(d.end(), prologue->defines.begin(), prologue->defines.end());
    d.emplace_back("NXV_GENERATED", "1");
    d.emplace_back("PROLOGUE", "1");
    key.generated = prologue->generated;
  } else {
    fold_features({in, out}, acc).add_defines(d);
  }
  d.emplace_back("WG", std::to_string(wg));
  d.emplace_back("TPR", std::to_string(tpr));
  d.emplace_back("ACC", glsl_name(acc));
  bool arg_op = is_arg(op);
  d.emplace_back("ARG", arg_op ? "1" : "0");
  d.emplace_back("FINAL", pass.final ? "1" : "0");
  d.emplace_back("FROM_PARTIALS", pass.from_partials ? "1" : "0");
  d.emplace_back("SUBGROUP", pass.subgroup ? "1" : "0");
  d.emplace_back("LANES_APART", pass.lanes_apart ? "1" : "0");
  if (pass.subgroup) d.emplace_back("SHUFFLE_XOR(v, m)", shuffle_xor(acc));
  d.emplace_back("VEC4", pass.vec4 ? "1" : "0");
  if (pass.vec4) {
    d.emplace_back("IN_VEC", glsl_vec4_type(in));
    d.emplace_back("IN_VREG", glsl_vec4_register_type(in));
    d.emplace_back("IN_VALIGN", std::to_string(vec4_alignment(in)));
  }
  // Where the pass reads: the tensor, or partials (the accumulator type; indices for arg ops).
  AccType partial = arg_op ? AccType::U32 : acc;
  if (pass.from_partials) {
    d.emplace_back("IN_STORE", glsl_name(partial));
    d.emplace_back("IN_ALIGN", std::to_string(acc_bytes(partial)));
    d.emplace_back("LOAD(x)", "(x)");
  } else {
    add_buffer_defines(d, "IN", in);
    if (combiner) {
      d.emplace_back("LOAD(x)", combiner->load);
      add_buffer_defines(d, "AUX", out);  // the accumulator
      d.emplace_back("LOAD_AUX(x)", combiner->load);
    } else if (is_logical(op)) {
      AccType c = acc_of(in);
      d.emplace_back("LOAD(x)", "uint(" + glsl_load(in, c) + " != " + glsl_name(c) + "(0))");
    } else {
      d.emplace_back("LOAD(x)", glsl_load(in, acc));
    }
  }
  if (pass.final) {
    add_buffer_defines(d, "OUT", out);
    d.emplace_back("STORE_OUT(v)", combiner ? combiner->store : glsl_store(out));
  } else {
    d.emplace_back("OUT_STORE", glsl_name(partial));
    d.emplace_back("OUT_ALIGN", std::to_string(acc_bytes(partial)));
    d.emplace_back("STORE_OUT(v)", "(v)");
  }
  if (combiner) {
    d.emplace_back("IDENT", glsl_name(acc) + "(0)");  // unused: invocations keep whether they hold a value
    d.emplace_back("COMBINE(a, b)", "nxv_combine(a, b)");
  } else if (!arg_op) {
    Fold fold = fold_for(fold_kind(op), acc);
    d.emplace_back("IDENT", fold.ident);
    d.emplace_back("COMBINE(a, b)", fold.combine);
  } else {
    bool floating = is_floating(acc);
    d.emplace_back("IDENT", glsl_name(acc) + "(0)");
    d.emplace_back("COMBINE(a, b)", "(a)");
    d.emplace_back("ARG_NAN(v)", floating ? "isnan(v)" : "false");
    d.emplace_back("ARG_BETTER(b, a)", op == OpId::argmax ? "((b) > (a))" : "((b) < (a))");
    d.emplace_back("TIE_HIGH", tie_high ? "true" : "false");
    if (pass.from_partials) {
      add_buffer_defines(d, "AUX", in);
      d.emplace_back("LOAD_AUX(x)", glsl_load(in, acc));
    }
  }
  GlslDefines scanned = d;
  if (!key.generated.empty()) scanned.emplace_back("", key.generated);
  auto uses = glsl_use_defines(scanned);
  d.insert(d.end(), uses.begin(), uses.end());
  return key;
}

// A variant of reduce.comp: one pass of a reduction.
struct ReduceVariant {
  static constexpr const char* kTemplate = "reduce";
  OpId op = OpId::sum;
  DType out = DType::F32, in = DType::F32;
  bool tie_high = false;  // argmax/argmin: the last of equal values
  uint32_t tpr = 1;       // invocations per row chunk
  uint32_t wg = kWorkgroupSize;
  PassKind pass{};
  std::optional<CombinerCode> combiner{};       // reduce/5's traced function
  std::optional<ReducePrologueCode> prologue{};  // a graph's chain computing the input

  auto fields() const { return std::tie(op, out, in, tie_high, tpr, wg, pass, combiner, prologue); }

  KernelKey source() const {
    return reduce_kernel_key(op, out, in, tie_high, tpr, wg, pass, combiner ? &*combiner : nullptr,
                             prologue ? &*prologue : nullptr);
  }

  // Every op on the types it takes, in the passes a plan makes: one invocation per row (in
  // workgroups of 256 and of 16), groups per row combining by shuffles (vectors of four where
  // the type has them) or in shared memory with their lanes apart, and the first, middle and
  // last of several passes.
  static std::vector<ReduceVariant> declared(const DeviceInfo&) {
    std::vector<ReduceVariant> all;
    auto add_passes = [&](ReduceVariant v) {
      bool vec4 = !glsl_vec4_type(v.in).empty();
      auto with = [&](uint32_t tpr, uint32_t wg, PassKind pass) {
        ReduceVariant w = v;
        w.tpr = tpr, w.wg = wg, w.pass = pass;
        all.push_back(w);
      };
      with(1, kWorkgroupSize, {});
      with(1, kSmallWorkgroup, {});
      with(kWorkgroupSize, kWorkgroupSize, {.vec4 = vec4, .subgroup = true});
      with(8, kWorkgroupSize, {.lanes_apart = true});
      with(kWorkgroupSize, kWorkgroupSize, {.final = false, .subgroup = true});
      with(kWorkgroupSize, kWorkgroupSize, {.from_partials = true, .final = false, .subgroup = true});
      with(kWorkgroupSize, kWorkgroupSize, {.from_partials = true, .subgroup = true});
      with(32, kWorkgroupSize, {.from_partials = true});
    };
    for (DType t : kAllDTypes) {
      bool wide_int = is_int(t) && dtype_size(t) < 8;
      for (OpId op : {OpId::sum, OpId::product}) {
        add_passes({.op = op, .out = t, .in = t});
        if (wide_int) add_passes({.op = op, .out = is_signed(t) ? DType::S64 : DType::U64, .in = t});
      }
      for (OpId op : {OpId::all, OpId::any}) add_passes({.op = op, .out = DType::U8, .in = t});
      if (is_complex(t)) continue;
      for (OpId op : {OpId::reduce_max, OpId::reduce_min}) add_passes({.op = op, .out = t, .in = t});
      for (OpId op : {OpId::argmax, OpId::argmin})
        for (bool tie_high : {false, true}) add_passes({.op = op, .out = DType::S64, .in = t, .tie_high = tie_high});
    }
    return all;
  }
};

// The reduced axes of `op` on an input of rank `rank`, one flag per axis.
Shape expected_shape(const Shape& in, const std::vector<bool>& reduced, bool keep) {
  Shape s;
  for (size_t a = 0; a < in.size(); ++a) {
    if (!reduced[a]) s.push_back(in[a]);
    else if (keep) s.push_back(1);
  }
  return s;
}

class ReduceFamily final : public StoreEpilogueFamily<ReduceAttrs> {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<ReduceVariant>(out, info);
    declare_scan_variants(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  bool takes_epilogue(const GraphNode& n) const override {
    const ReduceAttrs* a = n.attrs.empty() ? nullptr : n.attrs.try_as<ReduceAttrs>();
    return folds_values(n.op) && a && !a->combiner;
  }
  size_t own_inputs(const GraphNode& n) const override {
    const ReduceAttrs* a = n.attrs.empty() ? nullptr : n.attrs.try_as<ReduceAttrs>();
    return a && a->prologue ? a->prologue_inputs : 1;
  }
  bool has_fused_inputs(OpId, const Attrs& attrs) const override {
    const ReduceAttrs* a = attrs.empty() ? nullptr : attrs.try_as<ReduceAttrs>();
    return a && (a->epilogue || a->prologue);
  }

  Attrs decode(OpId op, const AttrReader& r) const override {
    if (is_cumulative(op)) return decode_cumulative(r);
    if (is_arg(op)) {
      ArgReduceAttrs a;
      if (r.has("axis")) a.axis = r.integer("axis");
      a.keep_axis = r.has("keep_axis") && r.boolean("keep_axis");
      if (r.has("tie_break")) {
        std::string tie = r.atom("tie_break");
        if (tie != "low" && tie != "high")
          throw Error(ErrorKind::InvalidArgument, "option tie_break: expected :low or :high, got :" + tie);
        a.tie_high = tie == "high";
      }
      if (a.axis < -1) throw Error(ErrorKind::InvalidArgument, "option axis: expected a non-negative axis");
      return Attrs::of(a);
    }
    ReduceAttrs a;
    if (op == OpId::reduce && r.has("combiner")) a.combiner = std::make_shared<const Combiner>(parse_combiner(r.atom("combiner")));
    if (r.has("axes")) {
      a.all_axes = false;
      a.axes = r.integers("axes");
      std::sort(a.axes.begin(), a.axes.end());
      a.axes.erase(std::unique(a.axes.begin(), a.axes.end()), a.axes.end());
    }
    a.keep_axes = r.has("keep_axes") && r.boolean("keep_axes");
    return Attrs::of(a);
  }

  bool takes_prologue(const GraphNode& n) const override {
    const ReduceAttrs* a = n.attrs.empty() ? nullptr : n.attrs.try_as<ReduceAttrs>();
    return folds_values(n.op) && a && !a->combiner && !a->prologue && !a->epilogue;
  }

  Attrs with_prologue(const GraphNode& n, ElementwiseChain chain, uint32_t inputs, const Shape& shape) const override {
    ReduceAttrs with = n.attrs.as<ReduceAttrs>();
    with.prologue = std::move(chain);
    with.prologue_inputs = inputs;
    with.prologue_shape = shape;
    return Attrs::of(std::move(with));
  }

  Support check(const CheckArgs& c) const override {
    if (is_cumulative(c.op)) return check_cumulative(c);
    const ReduceAttrs* ra = c.attrs.empty() ? nullptr : c.attrs.try_as<ReduceAttrs>();
    if (!ra || (!ra->epilogue && !ra->prologue)) return check_reduction(c);
    std::string name(op_info(c.op).name);
    auto invalid_request = [&](const std::string& why) { return not_native(name + why, ErrorKind::InvalidArgument); };
    if (!folds_values(c.op) || ra->combiner) return invalid_request(" takes no epilogue or prologue");
    size_t own = ra->prologue ? ra->prologue_inputs : 1;
    if (c.inputs.size() < own) return invalid_request(": takes at least " + std::to_string(own) + " tensors");
    if (!ra->epilogue && c.inputs.size() != own)
      return invalid_request(" takes " + std::to_string(own) + " tensors, got " + std::to_string(c.inputs.size()));
    bool invalid = false;
    // A prologue's steps compute in the same kernel as an epilogue's.
    std::vector<DType> prologue_types;
    if (ra->prologue)
      for (const ChainStep& s : ra->prologue->steps) prologue_types.push_back(s.out);
    if (ra->epilogue)
      if (std::string why = store_epilogue_error(c, *ra->epilogue, ra->product, name, invalid, own, prologue_types);
          !why.empty())
        return not_native(why, invalid ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
    OutSpec out{ra->epilogue ? ra->product : c.out.type, c.out.shape};
    std::array<TensorSpec, 1> input{c.inputs[0]};
    if (ra->prologue) {
      input[0] = contiguous_spec(ra->prologue->steps.empty() ? DType::F32 : ra->prologue->steps.back().out,
                                 ra->prologue_shape);
      Support own_check = check_reduction(CheckArgs{c.device, c.op, out, input, c.attrs});
      if (!own_check) return own_check;
      auto flags = reduced_axes(c.op, c.attrs, ra->prologue_shape.size());
      AccType acc = acc_type(c.op, out.type, input[0].type);
      std::vector<DType> kernel_types{out.type};
      if (acc == AccType::F64) kernel_types.push_back(DType::F64);
      // (With an epilogue its tensors and steps count too: one kernel holds both chains.)
      if (ra->epilogue) {
        for (size_t i = own; i < c.inputs.size(); ++i) kernel_types.push_back(c.inputs[i].type);
        for (const ChainStep& s : ra->epilogue->steps) kernel_types.push_back(s.out);
      }
      if (std::string why = reduce_prologue_error(c, *ra, flags, kernel_types, invalid); !why.empty())
        return not_native(why, invalid ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
      return {};
    }
    return check_reduction(CheckArgs{c.device, c.op, out, input, c.attrs});
  }

  void lower(const LowerArgs& a) const override {
    if (is_cumulative(a.op)) return lower_cumulative(a);
    const ReduceAttrs* ra = a.attrs.empty() ? nullptr : a.attrs.try_as<ReduceAttrs>();
    if (!ra || (!ra->epilogue && !ra->prologue)) return lower_reduction(a, a.out.type, nullptr, nullptr);
    if (ra->prologue) {
      // The prologue's copies (where any) come before the reduction's launches.
      ReducePrologue prologue =
          make_reduce_prologue(a, *ra, reduced_axes(a.op, a.attrs, ra->prologue_shape.size()));
      if (!ra->epilogue) return lower_reduction(a, a.out.type, nullptr, &prologue);
      StoreEpilogue epilogue = make_offset_epilogue(a, *ra->epilogue, ra->product, ra->prologue_inputs);
      return lower_reduction(a, ra->product, &epilogue, &prologue);
    }
    StoreEpilogue epilogue = make_offset_epilogue(a, *ra->epilogue, ra->product, 1);
    lower_reduction(a, ra->product, &epilogue, nullptr);
  }

 private:
  Support check_reduction(const CheckArgs& c) const {
    std::string name(op_info(c.op).name);
    if (c.attrs.empty()) return not_native(name + ": needs its options (axes)", ErrorKind::InvalidArgument);
    const TensorSpec& in = c.inputs[0];
    size_t rank = in.shape.size();
    bool keep;
    if (is_arg(c.op)) {
      const auto& a = c.attrs.as<ArgReduceAttrs>();
      if (a.axis >= int64_t(rank)) return not_native(name + ": axis out of range", ErrorKind::InvalidArgument);
      keep = a.keep_axis && a.axis >= 0;
    } else {
      const auto& a = c.attrs.as<ReduceAttrs>();
      for (int64_t x : a.axes)
        if (x < 0 || x >= int64_t(rank)) return not_native(name + ": axis out of range", ErrorKind::InvalidArgument);
      keep = a.keep_axes;
    }
    auto flags = reduced_axes(c.op, c.attrs, rank);
    Shape want = expected_shape(in.shape, flags, keep);
    // argmax/argmin of the whole tensor with keep_axis: Nx gives every axis size 1.
    if (is_arg(c.op) && c.attrs.as<ArgReduceAttrs>().axis < 0 && c.attrs.as<ArgReduceAttrs>().keep_axis)
      want.assign(rank, 1);
    if (c.out.shape != want) return not_native(name + ": output shape does not match the reduction", ErrorKind::InvalidArgument);
    DType out = c.out.type, t = in.type;
    const DeviceCore& core = *c.device.impl().core;
    FeatureSet features;
    if (c.op == OpId::reduce) {
      const auto& a = c.attrs.as<ReduceAttrs>();
      if (!a.combiner) return not_native("reduce: needs its function traced (option combiner)", ErrorKind::InvalidArgument);
      if (!c.inputs[1].shape.empty()) return not_native("reduce: the accumulator is a scalar", ErrorKind::InvalidArgument);
      if (t != out || c.inputs[1].type != out)
        return not_native("reduce: the tensor and the accumulator come in the output type", ErrorKind::InvalidArgument);
      bool invalid = false, has_f64 = c.device.has(kCapFloat64);
      std::string why = combiner_error(*a.combiner, out, has_f64, invalid);
      if (!why.empty()) return not_native("reduce: " + why, invalid ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
      features = combiner_code(*a.combiner, out, has_f64).features;
    } else {
      features = fold_features({t, out}, acc_type(c.op, out, t));
    }
    if (is_complex(t) && is_extreme(c.op)) return not_native(name + " is not defined on complex numbers", ErrorKind::InvalidArgument);
    if (is_logical(c.op) && out != DType::U8) return not_native(name + " gives u8", ErrorKind::InvalidArgument);
    if (is_arg(c.op) && !is_int(out)) return not_native(name + " gives integer indices", ErrorKind::InvalidArgument);
    if ((c.op == OpId::sum || c.op == OpId::product) &&
        (is_complex(out) != is_complex(t) || (is_int(out) && !is_int(t))))
      return not_native(name + ": the output type does not match the input's", ErrorKind::InvalidArgument);
    if (is_extreme(c.op) && !is_arg(c.op) && out != t)
      return not_native(name + ": the output type must be the input's", ErrorKind::InvalidArgument);
    try {
      glsl_storage_type(t);
      glsl_storage_type(out);
    } catch (const Error& e) {
      return not_native(e.what());
    }
    uint64_t elements = uint64_t(shape_size(in.shape));
    if (elements >= (1ull << 32) || elements * dtype_size(t) > core.chunk_bytes())
      return not_native(name + ": inputs over 2^32 elements or one buffer chunk are not reduced natively yet");
    try {
      features.check(core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    return {};
  }

  // `out`: the reduction's own output type (an epilogue's chain may store another). With a
  // prologue, the input is the chain's result: row-major, never stored (the first pass reads
  // the prologue's tensors instead).
  void lower_reduction(const LowerArgs& a, DType out, const StoreEpilogue* epilogue,
                       const ReducePrologue* prologue) const {
    DeviceImpl& impl = a.device.impl();
    Tensor in = a.inputs[0].tensor;
    uint32_t in_slot = a.inputs[0].slot;
    if (prologue) {
      const auto& ra = a.attrs.as<ReduceAttrs>();
      in = Tensor{};
      in.type = prologue->type, in.shape = ra.prologue_shape, in.strides = row_major_strides(ra.prologue_shape);
      in_slot = a.output_slot;  // an address the first pass never reads through
    }
    auto flags = reduced_axes(a.op, a.attrs, in.shape.size());
    Tensor source = in;
    uint32_t source_slot = in_slot;
    std::optional<ReduceGeometry> geometry = in.size() == 0 ? std::nullopt : reduce_geometry(in, flags);
    if (!geometry) {
      // Axes that do not collapse: lay the view out kept-first, then fold its rows.
      uint64_t kept = 1, red = 1;
      for (size_t d = 0; d < in.shape.size(); ++d) (flags[d] ? red : kept) *= uint64_t(in.shape[d]);
      if (in.size() > 0) {
        Tensor view = kept_first_view(in, flags);
        source = empty(a.device, in.type, view.shape);
        source_slot = a.builder.bind(source.buffer);
        append_copy(a.device, a.builder, view, in_slot, source, source_slot);
      }
      geometry = ReduceGeometry{kept, red, 1, red, 1, 0};
    }
    const DeviceCore& core = *impl.core;
    bool cpu = cpu_paths(core.profile());
    std::vector<ReducePass> passes = plan_reduce_passes(*geometry, cpu ? 8192 : (1u << 19), kWorkgroupSize, !cpu);
    bool no_vec4 = tuning().no_vec4;
    const ArgReduceAttrs* arg = is_arg(a.op) ? &a.attrs.as<ArgReduceAttrs>() : nullptr;
    const Combiner* traced = a.op == OpId::reduce ? a.attrs.as<ReduceAttrs>().combiner.get() : nullptr;
    const CombinerCode* combiner = traced ? &combiner_code(*traced, out, a.device.has(kCapFloat64)) : nullptr;
    AccType acc = combiner ? combiner->acc : acc_type(a.op, out, in.type);
    uint32_t partial_bytes = arg ? 4 : acc_bytes(acc);
    uint32_t in_bytes = uint32_t(dtype_size(in.type));

    // An empty input is never read (its rows fold nothing): any bound buffer serves as its address.
    if (in.size() == 0) source_slot = a.output_slot, source.offset = 0;
    BufferRef from{source_slot, uint64_t(source.offset) * in_bytes};
    std::shared_ptr<Buffer> partials;
    for (size_t p = 0; p < passes.size(); ++p) {
      const ReducePass& pass = passes[p];
      const ReduceGeometry& g = pass.geometry;
      PassKind kind{p > 0, p + 1 == passes.size()};
      // Four-wide loads where every row and chunk of the tensor starts 4-aligned.
      kind.vec4 = !kind.from_partials && g.inner == 1 && g.reduced_stride == 1 && g.reduced % 4 == 0 &&
                  (g.outer == 1 || g.outer_stride % 4 == 0) && source.offset % 4 == 0 &&
                  pass.chunk_len % 4 == 0 && !glsl_vec4_type(in.type).empty() && !no_vec4 && !combiner;
      kind.lanes_apart = pass.lanes_apart;
      kind.subgroup = pass.threads_per_row > 1 && !pass.lanes_apart && core.info().features.subgroup_shuffle &&
                      core.info().features.subgroup_basic;
      BufferRef to{a.output_slot, 0};
      if (!kind.final) {
        partials = impl.allocate(std::max<uint64_t>(pass.rows() * partial_bytes, 4));
        to = {a.builder.bind(partials), 0};
      }
      // One invocation per row shares nothing across the group: a few rows take a small one.
      const uint64_t invocations = pass.rows() * pass.threads_per_row;
      const uint32_t wg =
          pass.threads_per_row == 1 ? linear_workgroup_size(core, invocations, kWorkgroupSize) : kWorkgroupSize;
      const StoreEpilogue* epi = kind.final ? epilogue : nullptr;
      const ReducePrologue* pro = kind.from_partials ? nullptr : prologue;
      ReduceVariant variant{.op = a.op, .out = out, .in = in.type, .tie_high = arg && arg->tie_high,
                            .tpr = pass.threads_per_row, .wg = wg, .pass = kind};
      // A combiner's code is emitted once per function text (combiner_code): a cached eager
      // reduce/5 emits no GLSL.
      if (combiner) variant.combiner = *combiner;
      if (pro) variant.prologue = ReducePrologueCode{pro->generated, pro->defines, pro->features};
      const Kernel& kernel = *epilogue_kernel(impl.kernels, variant, epi);
      ReducePush push{};
      push.outer = uint32_t(g.outer), push.reduced = uint32_t(g.reduced), push.inner = uint32_t(g.inner);
      push.chunks = uint32_t(pass.chunks), push.chunk_len = uint32_t(pass.chunk_len);
      push.rows = uint32_t(pass.rows());
      push.outer_stride = uint32_t(g.outer_stride), push.reduced_stride = uint32_t(g.reduced_stride);
      push.inner_stride = uint32_t(g.inner_stride);
      std::vector<AddressPatch> patches{{offsetof(ReducePush, in_addr), from}, {offsetof(ReducePush, out_addr), to}};
      if (arg && kind.from_partials) {
        const ReduceGeometry& g0 = passes[0].geometry;
        push.aux_outer_stride = uint32_t(g0.outer_stride), push.aux_reduced_stride = uint32_t(g0.reduced_stride);
        push.aux_inner_stride = uint32_t(g0.inner_stride);
        patches.push_back({offsetof(ReducePush, aux_addr), BufferRef{source_slot, uint64_t(source.offset) * in_bytes}});
      }
      const LowerInput* init = combiner && !kind.from_partials ? &a.inputs[1] : nullptr;
      if (init)
        patches.push_back({offsetof(ReducePush, aux_addr),
                           BufferRef{init->slot, uint64_t(init->tensor.offset) * dtype_size(init->tensor.type)}});
      std::array<uint32_t, 3> grid{workgroups_for(core, invocations, wg), 1, 1};
      Launch& l = a.builder.launch(kernel, grid, push, std::move(patches));
      // (A prologue's pass reads its tensors, never `from`: the output's address.)
      if (!pro) a.builder.use(l, from.slot, Access::Read);
      if (arg && kind.from_partials) a.builder.use(l, source_slot, Access::Read);
      if (init) a.builder.use(l, init->slot, Access::Read);
      if (pro && epi) {
        // One block: the prologue's parameters, then the epilogue's (reduce.comp's ReduceFusedRef).
        std::vector<std::byte> params = pro->params;
        params.resize(kFusedEpilogueOffset);
        params.insert(params.end(), epi->params.begin(), epi->params.end());
        std::vector<AddressPatch> patches = pro->patches;
        for (AddressPatch p : epi->patches) patches.push_back({p.offset + kFusedEpilogueOffset, p.ref});
        attach_params(a.builder, l, std::move(params), std::move(patches), offsetof(ReducePush, fused_addr));
        use_epilogue_tensors(a.builder, l, epi);
      } else if (pro) {
        attach_params(a.builder, l, pro->params, pro->patches, offsetof(ReducePush, fused_addr));
      } else {
        attach_epilogue(a.builder, l, epi, offsetof(ReducePush, fused_addr));
      }
      if (pro)
        for (uint32_t slot : pro->slots) a.builder.use(l, slot, Access::Read);
      a.builder.use(l, to.slot, Access::Write);
      from = to;
    }
  }
};

}  // namespace

const Family& reduce_family() {
  static const ReduceFamily family;
  return family;
}

}  // namespace nxv
