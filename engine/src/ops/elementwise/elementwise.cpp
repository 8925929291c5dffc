// The elementwise family: every Nx elementwise callback (scalar expressions in
// scalar_defs.cpp, their precision policy in scalar_exprs.cpp) on every Nx type, plus as_type
// and bitcast, with Nx broadcasting (operands arrive un-broadcast and in their own types) and
// any layout. One kernel template (elementwise.comp) serves them all.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "ops/elementwise/elementwise_host.hpp"
#include "kernels/glsl_uses.hpp"
#include "memory/copy.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/elementwise/elementwise_push.h"
#include "ops/elementwise/fusion.hpp"
#include "ops/elementwise/simplification.hpp"
#include "ops/family.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

std::string shape_string(const Shape& shape) {
  std::string s = "{";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "}";
}


// What an op's scalar expression needs from the device. Building the expression (its GLSL) costs
// more than recording the op, so each eager call finds the answer here instead.
FeatureSet cached_features(OpId op, DType out, const std::vector<DType>& in, bool has_f64) {
  if (in.size() > 4) return scalar_expr(op, out, in, has_f64).features;
  uint64_t key = uint64_t(op) | uint64_t(out) << 16 | uint64_t(has_f64) << 24 | uint64_t(in.size()) << 25;
  for (size_t i = 0; i < in.size(); ++i) key |= uint64_t(in[i]) << (32 + 8 * i);
  static std::shared_mutex mutex;
  static std::unordered_map<uint64_t, FeatureSet> cache;
  {
    std::shared_lock lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  FeatureSet features = scalar_expr(op, out, in, has_f64).features;
  std::unique_lock lock(mutex);
  cache.emplace(key, features);
  return features;
}

class ElementwiseFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<ElementwiseVariant>(out, info);
  }

  Support check(const CheckArgs& a) const override {
    std::string name(op_info(a.op).name);
    std::vector<DType> in;
    in.reserve(a.inputs.size());
    for (const auto& t : a.inputs) {
      in.push_back(t.type);
      if (!broadcastable(t.shape, a.out.shape))
        return not_native(name + ": an operand cannot be broadcast to the output shape", ErrorKind::InvalidArgument);
    }
    bool invalid = false;
    bool chain = a.op == OpId::elementwise_chain;
    if (chain && a.attrs.empty())
      return not_native("elementwise_chain: needs its steps (an ElementwiseChain)", ErrorKind::InvalidArgument);
    if (chain && in.size() > 3)
      if (std::string why = wide_chain_error(a); !why.empty()) return not_native(why);
    std::string why = chain ? chain_typing_error(a.attrs.as<ElementwiseChain>(), a.out.type, in, invalid, NXV_EW_MAX_WIDE)
                            : elementwise_typing_error(a.op, a.out.type, in, invalid);
    if (!why.empty()) return not_native(why, invalid ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
    if (a.op == OpId::bitcast) return {};  // a view: no kernel, no feature
    bool has_f64 = a.device.has(kCapFloat64);
    FeatureSet features;
    if (chain) {
      const auto& steps = a.attrs.as<ElementwiseChain>();
      if (!has_f64)
        if (std::string needs = chain_f64_required_error(steps, in); !needs.empty()) return not_native(needs);
      chain_rounding(steps, in, has_f64, &features);  // split or not, native
    } else {
      if (!has_f64)
        if (std::string needs = f64_required_error(a.op, a.out.type, in); !needs.empty()) return not_native(needs);
      features = cached_features(a.op, a.out.type, in, has_f64);
    }
    try {
      features.check(*a.device.impl().core, name.c_str());
    } catch (const Error& e) {
      return not_native(e.what());
    }
    return {};
  }

  std::optional<Tensor> view_result(OpId op, const OutSpec& out, const std::vector<Tensor>& inputs,
                                    const Attrs&) const override {
    // An operand broadcast to the output (a chain's steps run one by one take scalars) stays a view.
    if ((op == OpId::as_type || op == OpId::bitcast) && inputs[0].type == out.type)
      return broadcast_view(inputs[0], out.shape);
    if (op != OpId::bitcast) return std::nullopt;
    Tensor view = broadcast_view(inputs[0], out.shape);  // same bits, same element size: a view under the new type
    view.type = out.type;
    return view;
  }

  void lower(const LowerArgs& a) const override {
    if (a.op == OpId::elementwise_chain) {
      std::vector<DType> types;
      for (const auto& in : a.inputs) types.push_back(in.tensor.type);
      const auto& chain = a.attrs.as<ElementwiseChain>();
      if (chain_rounding(chain, types, a.device.has(kCapFloat64)).reason != ChainSplit::None)
        return lower_steps(a, chain);
    }
    std::vector<Tensor> views;
    std::vector<uint32_t> slots;
    std::vector<DType> types;
    views.reserve(a.inputs.size());
    slots.reserve(a.inputs.size());
    types.reserve(a.inputs.size());
    for (const auto& in : a.inputs) {
      views.push_back(broadcast_view(in.tensor, a.out.shape));
      slots.push_back(in.slot);
      types.push_back(in.tensor.type);
    }
    if (append_host_elementwise(a, views, slots)) return;
    bool dense = all_dense(views);
    // Four-wide loads and stores where every dense operand starts 4-element aligned.
    bool no_vec4 = tuning().no_vec4;
    // CPU drivers run a generated chain one element per trip at any size: four-wide, its
    // inlined steps made lavapipe's SGD update (w - 0.01 * g) three times slower.
    bool one_wide = dense && (elementwise_one_wide(a.device, a.op, a.out.type, shape_size(a.out.shape)) ||
                              (a.op == OpId::elementwise_chain && strided_runs(*a.device.impl().core)));
    bool runs = !dense && strided_runs(*a.device.impl().core);
    bool vec4 = dense && views.size() <= 2 && !glsl_vec4_type(a.out.type).empty() && !no_vec4 && !one_wide;
    for (const auto& v : views) {
      if (glsl_vec4_type(v.type).empty()) vec4 = false;
      bool scalar = v.size() == 1 || std::all_of(v.strides.begin(), v.strides.end(), [](int64_t x) { return x == 0; });
      if (!scalar && v.offset % 4 != 0) vec4 = false;
    }
    bool has_f64 = a.device.has(kCapFloat64);
    const uint64_t elements = uint64_t(shape_size(a.out.shape));
    if (a.op == OpId::elementwise_chain && views.size() > 3) return lower_wide(a, views, slots, types);
    ElementwiseVariant variant{.op = a.op, .out = a.out.type, .in = types, .linear = dense, .vec4 = vec4,
                               .cpu_loops = one_wide || runs, .has_f64 = has_f64,
                               .workgroup = linear_workgroup_size(*a.device.impl().core, elements, kWorkgroupSize)};
    if (a.op == OpId::elementwise_chain) {
      GeneratedExpr& chain = variant.chain.emplace();
      chain.expr = chain_scalar_expr(a.attrs.as<ElementwiseChain>(), types, has_f64, chain.generated);
    }
    const Kernel& kernel = a.device.impl().kernels.get(variant);
    emit_elementwise_launches(a.device, a.builder, kernel, a.output, a.output_slot, views, slots, dense);
  }

  // Cheaper nodes with the same bits (simplification.hpp): comparisons with integer constants
  // a float holds, divisions by powers of two.
  std::optional<uint32_t> append_simplified(const GraphNode& n, const Graph& graph, std::span<const uint32_t> inputs,
                                            Graph& out, const Device& device) const override {
    if (n.op == OpId::divide) return simplify_division_by_power_of_two(n, inputs, out, device.has(kCapFloat64));
    return simplify_comparison_with_constant(n, graph, inputs, out);
  }

  bool pointwise(const GraphNode& n, const Graph& graph) const override {
    if (n.op == OpId::bitcast) return false;
    if (n.op == OpId::elementwise_chain) return !n.attrs.empty();
    if (n.op == OpId::as_type && graph.value(n.inputs[0]).type == n.out.type) return false;
    return true;
  }

  // Every invocation stores the elements whose operands it loaded (operands of the output's
  // shape are read at the element stored; broadcast ones are not).
  bool stores_where_it_reads(const GraphNode& n, size_t input, const Graph& graph) const override {
    const OutSpec& in = graph.value(n.inputs.at(input));
    return pointwise(n, graph) && in.shape == n.out.shape && dtype_size(in.type) == dtype_size(n.out.type);
  }

  std::optional<ChainOperand> append_pointwise_steps(const GraphNode& node, const std::vector<ChainOperand>& operand_of,
                                                     ElementwiseChain& chain) const override {
    if (node.op != OpId::elementwise_chain) {
      chain.steps.push_back({node.op, node.out.type, operand_of});
      return ChainOperand{ChainOperand::From::Step, uint32_t(chain.steps.size() - 1)};
    }
    const auto& own = node.attrs.as<ElementwiseChain>();
    uint32_t shift = uint32_t(chain.steps.size()), constants = uint32_t(chain.constants.size());
    chain.constants.insert(chain.constants.end(), own.constants.begin(), own.constants.end());
    for (ChainStep step : own.steps) {
      for (auto& o : step.operands) {
        if (o.from == ChainOperand::From::Step) o.index += shift;
        else if (o.from == ChainOperand::From::Constant) o.index += constants;
        else if (o.index < operand_of.size()) o = operand_of[o.index];
        else return std::nullopt;
      }
      chain.steps.push_back(std::move(step));
    }
    return ChainOperand{ChainOperand::From::Step, uint32_t(chain.steps.size() - 1)};
  }

 private:
  // Over three operands a chain runs in elementwise_wide.comp, which takes each dense like the
  // output or as a single element, and one launch: "" where the call fits, else why not.
  static std::string wide_chain_error(const CheckArgs& a) {
    if (a.inputs.size() > NXV_EW_MAX_WIDE)
      return "elementwise_chain: at most " + std::to_string(NXV_EW_MAX_WIDE) + " operands";
    uint64_t n = uint64_t(shape_size(a.out.shape)), chunk = a.device.impl().core->chunk_bytes();
    if (n >= kMaxDispatchElements || n * dtype_size(a.out.type) > chunk)
      return "elementwise_chain: over three operands, the output must fit one launch and one buffer chunk";
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      const TensorSpec& t = a.inputs[k];
      // One element, or one element broadcast (a constant computed when a graph compiles).
      bool single = shape_size(t.shape) == 1 || (!t.strides.empty() && std::all_of(t.strides.begin(), t.strides.end(),
                                                                                    [](int64_t s) { return s == 0; }));
      // (A view of the output's shape is copied row-major first: see lower_wide.)
      if (!single && t.shape != a.out.shape)
        return "elementwise_chain: over three operands, each must have the output's shape or be a single element "
               "(operand " + std::to_string(k) + ": shape " + shape_string(t.shape) + ", output " +
               shape_string(a.out.shape) + ")";
    }
    return "";
  }

  void lower_wide(const LowerArgs& a, const std::vector<Tensor>& views, const std::vector<uint32_t>& slots,
                  const std::vector<DType>& types) const {
    uint64_t n = uint64_t(shape_size(a.out.shape));
    ElementwiseWideVariant variant{.out = a.out.type, .in = types,
                                   .workgroup = linear_workgroup_size(*a.device.impl().core, n, kWorkgroupSize)};
    variant.chain.expr =
        chain_scalar_expr(a.attrs.as<ElementwiseChain>(), types, a.device.has(kCapFloat64), variant.chain.generated);
    const Kernel& kernel = a.device.impl().kernels.get(variant);
    ElementwiseWidePush push{};
    push.n = uint32_t(n);
    std::vector<AddressPatch> patches{
        {offsetof(ElementwiseWidePush, out_addr), {a.output_slot, uint64_t(a.output.offset) * dtype_size(a.out.type)}}};
    std::vector<uint32_t> read = slots;
    for (size_t k = 0; k < views.size(); ++k) {
      Tensor v = views[k];
      bool single = std::all_of(v.strides.begin(), v.strides.end(), [](int64_t s) { return s == 0; });
      if (!single && !v.is_contiguous()) {
        // A strided view (a transpose a graph passes on): its elements row-major first.
        Tensor dense = empty(a.device, v.type, v.shape);
        read[k] = a.builder.bind(dense.buffer);
        append_copy(a.device, a.builder, v, slots[k], dense, read[k]);
        v = dense;
      }
      if (single) push.scalars |= 1u << k;
      patches.push_back({uint32_t(offsetof(ElementwiseWidePush, in_addr) + 8 * k),
                         {read[k], uint64_t(v.offset) * dtype_size(v.type)}});
    }
    std::array<uint32_t, 3> grid{workgroups_for(*a.device.impl().core, n, kernel.workgroup_size, kernel.max_workgroups), 1, 1};
    Launch& l = a.builder.launch(kernel, grid, push, std::move(patches));
    for (uint32_t s : read) a.builder.use(l, s, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
  }

  // A chain that cannot be one kernel with its steps' bits (chain_rounding): each step as its
  // own kernel, its result in a buffer of its own, as the ops run one by one.
  void lower_steps(const LowerArgs& a, const ElementwiseChain& chain) const {
    std::vector<LowerInput> results;
    for (size_t s = 0; s < chain.steps.size(); ++s) {
      const ChainStep& step = chain.steps[s];
      bool last = s + 1 == chain.steps.size();
      std::vector<LowerInput> operands;
      for (const auto& o : step.operands) {
        if (o.from == ChainOperand::From::Constant) {
          // As the graph's constant node would be: a scalar filled on the device.
          const ChainConstant& c = chain.constants[o.index];
          Tensor k = empty(a.device, c.type, {});
          uint32_t slot = a.builder.bind(k.buffer);
          append_constant(a.device, a.builder, k, slot, c.value);
          operands.push_back({k, slot});
          continue;
        }
        operands.push_back(o.from == ChainOperand::From::Input ? a.inputs[o.index] : results[o.index]);
      }
      bool identity = step.op == OpId::as_type && operands[0].tensor.type == step.out;
      if (identity && !last) {
        results.push_back(operands[0]);  // a view when run alone: the operand's bits
        continue;
      }
      Tensor out = last ? a.output : empty(a.device, step.out, a.out.shape);
      uint32_t slot = last ? a.output_slot : a.builder.bind(out.buffer);
      if (identity) {
        append_copy(a.device, a.builder, broadcast_view(operands[0].tensor, a.out.shape), operands[0].slot, out, slot);
        break;
      }
      OutSpec spec{step.out, a.out.shape};
      Attrs none;
      lower(LowerArgs{a.device, step.op, spec, operands, out, slot, none, a.builder});
      results.push_back({out, slot});
    }
  }
};

}  // namespace

namespace {

// Ops of a few instructions an element: memory-bound on any device, so that one element a
// trip costs them nothing on lavapipe (multiply f32, add f16: same speed) and halves their
// compile there. Long math keeps the GPU's four elements a trip: their independent chains are
// what lavapipe overlaps (one element a trip: sin 1.8x, exp 1.5x, sqrt 1.45x slower).
bool short_expression(OpId op, DType out) {
  using enum OpId;
  switch (op) {
    case as_type: case add: case subtract: case negate: case max: case min: case select: case equal:
    case not_equal: case greater: case less: case greater_equal: case less_equal: case logical_and:
    case logical_or: case logical_xor: case logical_not: case bitwise_and: case bitwise_or: case bitwise_xor:
    case bitwise_not: case is_nan: case is_infinity: case conjugate: case real: case imag:
      return true;
    case multiply: return !is_complex(out);
    default: return false;
  }
}

}  // namespace

bool broadcastable(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t o = out[out.size() - in.size() + i];
    if (in[i] != o && in[i] != 1) return false;
  }
  return true;
}

bool elementwise_one_wide(Device& device, OpId op, DType out, int64_t elements) {
  if (!cpu_paths(device.impl().core->profile())) return false;
  return tuning().one_wide || short_expression(op, out) || elements <= kOneWideMaxElements;
}

KernelKey elementwise_kernel_key(const ScalarExpr& s, DType out, const std::vector<DType>& in, bool linear, bool vec4,
                                 bool cpu_loops, std::string generated) {
  KernelKey key{.name = "elementwise", .workgroup_size = kWorkgroupSize};
  key.generated = std::move(generated);
  key.max_workgroups = s.max_workgroups;
  auto& d = key.defines;
  d = s.defines;
  s.features.add_defines(d);
  d.emplace_back("NIN", std::to_string(in.size()));
  d.emplace_back("LINEAR", linear ? "1" : "0");
  d.emplace_back("C", s.compute);
  d.emplace_back("OUT_STORE", glsl_storage_type(out));
  d.emplace_back("OUT_ALIGN", std::to_string(dtype_size(out)));
  d.emplace_back("STORE_OUT(v)", glsl_store(out));
  const char* names[] = {"A", "B", "CC"};
  for (size_t i = 0; i < in.size(); ++i) {
    std::string n = names[i];
    d.emplace_back(n + "_STORE", glsl_storage_type(in[i]));
    d.emplace_back(n + "_ALIGN", std::to_string(dtype_size(in[i])));
    // No load types: the expression takes its inputs as stored, in registers (f16 as float).
    d.emplace_back("LOAD_" + n + "(x)", s.load_types.empty() ? glsl_scalar_register_type(in[i]) + "(x)"
                                                             : glsl_load(in[i], s.load_types[i]));
  }
  d.emplace_back(in.size() == 3 ? "OP(a,b,c)" : in.size() == 2 ? "OP(a,b)" : "OP(a)", s.expr);
  bool one_wide = cpu_loops && linear;
  // Defined only where set: the keys (and SPIR-V) of the GPU's kernels stay as they were.
  if (one_wide) d.emplace_back("ONE_WIDE", "1");
  if (cpu_loops && !linear) d.emplace_back("RUN", std::to_string(kStridedRun) + "u");
  // Strided and one-wide kernels have one call site of OP already.
  if (!s.fast_expr.empty() && linear && !one_wide)
    d.emplace_back(in.size() == 3 ? "OP_FAST(a,b,c,exact)" : in.size() == 2 ? "OP_FAST(a,b,exact)" : "OP_FAST(a,exact)",
                   s.fast_expr);
  d.emplace_back("VEC4", vec4 ? "1" : "0");
  if (vec4) {
    d.emplace_back("OUT_VEC", glsl_vec4_type(out));
    d.emplace_back("OUT_VALIGN", std::to_string(vec4_alignment(out)));
    // f16 results leave registers as one vector conversion (see glsl_vec4_register_type), after
    // the same float rounding step as the scalar store.
    if (out == DType::F16) d.emplace_back("OUT_VEC_OF(r0,r1,r2,r3)", "f16vec4(vec4(float(r0), float(r1), float(r2), float(r3)))");
    for (size_t i = 0; i < in.size(); ++i) {
      std::string n = names[i];
      d.emplace_back(n + "_VEC", glsl_vec4_type(in[i]));
      d.emplace_back(n + "_VREG", glsl_vec4_register_type(in[i]));
      d.emplace_back(n + "_SREG", glsl_scalar_register_type(in[i]));
      d.emplace_back(n + "_VALIGN", std::to_string(vec4_alignment(in[i])));
    }
  }
  GlslDefines scanned = d;
  if (!key.generated.empty()) scanned.emplace_back("", key.generated);
  auto uses = glsl_use_defines(scanned);
  d.insert(d.end(), uses.begin(), uses.end());
  return key;
}

KernelKey wide_kernel_key(const ScalarExpr& s, DType out, const std::vector<DType>& in, std::string generated) {
  KernelKey key{.name = "elementwise_wide", .workgroup_size = kWorkgroupSize};
  key.max_workgroups = s.max_workgroups;
  auto& d = key.defines;
  d = s.defines;
  s.features.add_defines(d);
  d.emplace_back("NIN", std::to_string(in.size()));
  d.emplace_back("C", s.compute);
  d.emplace_back("OUT_STORE", glsl_storage_type(out));
  d.emplace_back("OUT_ALIGN", std::to_string(dtype_size(out)));
  d.emplace_back("STORE_OUT(v)", glsl_store(out));
  std::string buffers, loads;
  for (size_t k = 0; k < in.size(); ++k) {
    std::string n = std::to_string(k), buffer = "NxvWideIn" + n;
    buffers += "layout(buffer_reference, std430, buffer_reference_align = " + std::to_string(dtype_size(in[k])) +
               ") readonly buffer " + buffer + " { " + glsl_storage_type(in[k]) + " v[]; };\n";
    // As elementwise.comp's LOAD_A: the operand as stored, in its register type, or the chain's load type.
    std::string reg = s.load_types.empty() ? glsl_scalar_register_type(in[k]) : s.load_types[k];
    d.emplace_back("LOAD_IN" + n + "(x)", s.load_types.empty() ? reg + "(x)" : glsl_load(in[k], s.load_types[k]));
    std::string name = k < 3 ? std::string(1, "abc"[k]) : "in" + n;
    loads += reg + " " + name + " = LOAD_IN" + n + "(" + buffer + "(pc.in_addr[" + n + "]).v[((pc.scalars >> " + n +
             "u) & 1u) != 0u ? 0u : (i)]); ";
  }
  d.emplace_back("NXV_WIDE_LOADS(i)", loads);
  d.emplace_back("OP", s.expr);
  key.generated = buffers + generated;
  GlslDefines scanned = d;
  scanned.emplace_back("", key.generated);
  auto uses = glsl_use_defines(scanned);
  d.insert(d.end(), uses.begin(), uses.end());
  return key;
}

void emit_elementwise_launches(Device& device, LaunchBuilder& builder, const Kernel& kernel, const Tensor& out,
                               uint32_t out_slot, const std::vector<Tensor>& views, const std::vector<uint32_t>& slots,
                               bool dense) {
  const DeviceCore& core = *device.impl().core;
  size_t max_rank = views.size() <= 2 ? NXV_EW_MAX_RANK : NXV_EW_MAX_RANK3;
  plan_linear(out, out_slot, views, slots, dense, max_rank, [&](const PlannedRange& p) {
    std::array<uint32_t, 3> grid{workgroups_for(core, p.n, kernel.workgroup_size, kernel.max_workgroups), 1, 1};
    std::vector<AddressPatch> patches;
    patches.reserve(4);
    Launch* l = nullptr;
    if (views.size() <= 2) {
      ElementwisePush push{};
      push.n = p.n, push.rank = p.rank, push.start = p.start, push.dense = p.dense;
      for (int d = 0; d < NXV_EW_MAX_RANK; ++d) {
        push.shape[d] = p.shape[d];
        push.a_stride[d] = p.stride[0][d];
        push.b_stride[d] = p.stride[1][d];
      }
      patches.push_back({offsetof(ElementwisePush, out_addr), p.out});
      patches.push_back({offsetof(ElementwisePush, a_addr), p.in[0]});
      if (views.size() == 2) patches.push_back({offsetof(ElementwisePush, b_addr), p.in[1]});
      l = &builder.launch(kernel, grid, push, std::move(patches));
    } else {
      Elementwise3Push push{};
      push.n = p.n, push.rank = p.rank, push.start = p.start, push.dense = p.dense;
      for (int d = 0; d < NXV_EW_MAX_RANK3; ++d) {
        push.shape[d] = p.shape[d];
        push.a_stride[d] = p.stride[0][d];
        push.b_stride[d] = p.stride[1][d];
        push.c_stride[d] = p.stride[2][d];
      }
      patches = {{offsetof(Elementwise3Push, out_addr), p.out},
                 {offsetof(Elementwise3Push, a_addr), p.in[0]},
                 {offsetof(Elementwise3Push, b_addr), p.in[1]},
                 {offsetof(Elementwise3Push, c_addr), p.in[2]}};
      l = &builder.launch(kernel, grid, push, std::move(patches));
    }
    for (uint32_t s : slots) builder.use(*l, s, Access::Read);
    builder.use(*l, out_slot, Access::Write);
  });
}

KernelKey ElementwiseVariant::source() const {
  KernelKey key = chain ? elementwise_kernel_key(chain->expr, out, in, linear, vec4, cpu_loops, chain->generated)
                        : elementwise_kernel_key(scalar_expr(op, out, in, has_f64), out, in, linear, vec4, cpu_loops);
  key.workgroup_size = workgroup;
  return key;
}

KernelKey ElementwiseWideVariant::source() const {
  KernelKey key = wide_kernel_key(chain.expr, out, in, chain.generated);
  key.workgroup_size = workgroup;
  return key;
}

// Every op on each typing Nx gives it (as check accepts it on this device), in each layout:
// dense, four-wide, strided, and the CPU drivers' loops and small workgroups.
std::vector<ElementwiseVariant> ElementwiseVariant::declared(const DeviceInfo& info) {
  std::vector<ElementwiseVariant> all;
  bool has_f64 = info.features.float64;
  for (const OpInfo& row : op_table()) {
    if (row.family != FamilyId::elementwise || row.arity < 1 || row.arity > 3 || row.id == OpId::bitcast) continue;
    for (DType t : kAllDTypes)
      for (DType out : kAllDTypes) {
        std::vector<DType> in(size_t(row.arity), t);
        bool invalid = false;
        if (!elementwise_typing_error(row.id, out, in, invalid).empty()) continue;
        if (!has_f64 && !f64_required_error(row.id, out, in).empty()) continue;
        auto add = [&](bool linear, bool vec4, bool cpu_loops, uint32_t workgroup) {
          all.push_back({.op = row.id, .out = out, .in = in, .linear = linear, .vec4 = vec4, .cpu_loops = cpu_loops,
                         .has_f64 = has_f64, .workgroup = workgroup});
        };
        add(true, false, false, kWorkgroupSize);
        if (in.size() <= 2 && !glsl_vec4_type(out).empty() && !glsl_vec4_type(t).empty())
          add(true, true, false, kWorkgroupSize);
        add(false, false, false, kWorkgroupSize);
        add(true, false, true, kSmallWorkgroup);
        add(false, false, true, kWorkgroupSize);
      }
  }
  return all;
}

namespace {

ElementwiseVariant as_type_variant(DType to, DType from, bool dense, bool cpu_loops, bool has_f64) {
  return {.op = OpId::as_type, .out = to, .in = {from}, .linear = dense, .cpu_loops = cpu_loops, .has_f64 = has_f64,
          .workgroup = kWorkgroupSize};
}

}  // namespace

const Kernel& as_type_kernel(Device& device, DType to, DType from) {
  bool one_wide = elementwise_one_wide(device, OpId::as_type, to);
  return device.impl().kernels.get(as_type_variant(to, from, true, one_wide, device.has(kCapFloat64)));
}

void append_as_type(Device& device, LaunchBuilder& builder, const Tensor& in, uint32_t in_slot, const Tensor& out,
                    uint32_t out_slot) {
  std::vector<Tensor> views{broadcast_view(in, out.shape)};
  bool dense = all_dense(views);
  const Kernel* kernel = nullptr;
  if (dense) {
    kernel = &as_type_kernel(device, out.type, in.type);
  } else {
    bool runs = strided_runs(*device.impl().core);
    kernel = &device.impl().kernels.get(as_type_variant(out.type, in.type, false, runs, device.has(kCapFloat64)));
  }
  emit_elementwise_launches(device, builder, *kernel, out, out_slot, views, {in_slot}, dense);
}

const Family& elementwise_family() {
  static const ElementwiseFamily family;
  return family;
}

}  // namespace nxv
