// The region family: a subgraph of small values in one launch of one workgroup (region.hpp).
// On a GPU a launch that depends on the one before costs a few microseconds of the GPU's time,
// more than a workgroup's work on values this small; the region runs the subgraph's phases
// between workgroup barriers instead, each op with its eager kernel's bits.
#include "ops/region/region.hpp"

#include <cstddef>
#include <optional>

#include "device/device_impl.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_in_workgroup.hpp"
#include "ops/family.hpp"
#include "ops/loop/loop_code.hpp"
#include "ops/loop/loop_push.h"
#include "ops/reduce/reduce_attrs.hpp"

namespace nxv {

namespace {

TensorSpec row_major_spec(const OutSpec& s) { return {s.type, s.shape, row_major_strides(s.shape), 0}; }

// The body's code with its inputs read through `views` (none: row-major), staged in shared
// memory where everything fits. Throws Unsupported where the code does not take the body.
loop::LoopCode region_code(Device& device, const Graph& body, const std::vector<Tensor>& views) {
  const std::vector<bool> none(body.input_count(), false);
  for (bool stage : {true, false}) {
    loop::LoopCode code(device, body, 0, {}, none, 1, false, uint32_t(body.input_count()), stage);
    code.as_program(views);
    std::vector<std::pair<uint32_t, Tensor>> fixed;
    code.generate(fixed);
    if (!fixed.empty()) loop::refuse("a value computed when it compiles");
    if (code.fits_shared_memory() || !stage) return code;
  }
  loop::refuse("unreachable");
}

class RegionFamily final : public Family {
 public:
  Support check(const CheckArgs& c) const override {
    if (c.op == OpId::region_output) {
      if (!c.attrs.try_as<RegionOutputAttrs>()) return not_native("region_output: a region's output offset", ErrorKind::InvalidArgument);
      return {};
    }
    const auto* r = c.attrs.try_as<RegionAttrs>();
    if (!r || !r->body) return not_native("region: a region's subgraph (formed when a program compiles)", ErrorKind::InvalidArgument);
    if (c.inputs.size() != r->body->input_count() || r->offsets.size() != r->body->outputs().size())
      return not_native("region: inputs or outputs other than its subgraph's", ErrorKind::InvalidArgument);
    return {};
  }

  std::optional<Tensor> view_result(OpId op, const OutSpec& out, const std::vector<Tensor>& inputs,
                                    const Attrs& attrs) const override {
    if (op != OpId::region_output || inputs.size() != 1) return std::nullopt;
    const uint64_t at = uint64_t(inputs[0].offset) * dtype_size(inputs[0].type) + attrs.as<RegionOutputAttrs>().byte_offset;
    Tensor t = inputs[0];
    t.type = out.type;
    t.shape = out.shape;
    t.strides = row_major_strides(out.shape);
    t.offset = int64_t(at / dtype_size(out.type));
    return t;
  }

  void lower(const LowerArgs& a) const override {
    const auto& r = a.attrs.as<RegionAttrs>();
    std::vector<Tensor> views;
    for (const auto& in : a.inputs) views.push_back(in.tensor);
    loop::LoopCode code = region_code(a.device, *r.body, views);
    const Kernel& kernel = a.device.impl().kernels.get(code.key());
    std::vector<AddressPatch> patches;  // into the parameter block
    auto address = [&](uint32_t k, uint32_t slot, uint64_t byte_offset) {
      patches.push_back({uint32_t(offsetof(LoopParams, addr) + k * sizeof(uint64_t)), {slot, byte_offset}});
    };
    for (uint32_t i = 0; i < a.inputs.size(); ++i) address(i, a.inputs[i].slot, 0);
    const uint64_t base = uint64_t(a.output.offset) * dtype_size(a.output.type);
    for (size_t j = 0; j < r.offsets.size(); ++j) address(code.outputs()[j].second, a.output_slot, base + r.offsets[j]);
    LoopPush push{};
    push.trips = 1;
    Launch& l = a.builder.launch(kernel, {1, 1, 1}, push, {});
    a.builder.params(l, LoopParams{}, offsetof(LoopPush, params_addr), std::move(patches));
    for (const auto& in : a.inputs) a.builder.use(l, in.slot, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
  }
};

}  // namespace

bool region_view(const GraphNode& node, const Graph& g) {
  if (node.op == OpId::transpose) return true;
  if (node.inputs.size() != 1) return false;
  const OutSpec& s = g.value(node.inputs[0]);
  Tensor layout;
  layout.type = s.type, layout.shape = s.shape, layout.strides = row_major_strides(s.shape);
  auto view = family_of(node.op).view_result(node.op, node.out, {layout}, node.attrs);
  return view && view->type == s.type;
}

bool region_computes(Device& device, const GraphNode& node, const Graph& g) {
  auto small = [](const OutSpec& s) {
    const int64_t n = shape_size(s.shape);
    return n > 0 && n <= kRegionElements && loop::supported_type(s.type);
  };
  if (node.inputs.empty() || !small(node.out)) return false;
  for (uint32_t x : node.inputs)
    if (!small(g.value(x))) return false;
  const Family& family = family_of(node.op);
  if (region_view(node, g)) return true;
  if (node.op == OpId::dot) {
    if (node.inputs.size() != 2) return false;
    std::string why;
    auto w = workgroup_matvec(device, node.attrs.as<DotAttrs>(), row_major_spec(g.value(node.inputs[0])),
                              row_major_spec(g.value(node.inputs[1])), node.out.type, why);
    return w && w->batch == 1;
  }
  if (loop::is_reduction(node.op)) return node.inputs.size() == 1 && !family.has_fused_inputs(node.op, node.attrs);
  if (node.op == OpId::pad) return node.inputs.size() == 2;
  return family.pointwise(node, g);
}

FloatControls region_float_controls(Device& device, const GraphNode& node, const Graph& g) {
  auto wide = [](DType t) { return t == DType::F64 || t == DType::C128; };
  FloatControls c = wide(node.out.type) ? FloatControls::F64 : FloatControls::None;
  std::vector<DType> in;
  for (uint32_t x : node.inputs) {
    in.push_back(g.value(x).type);
    if (wide(in.back())) c = c | FloatControls::F64;
  }
  if (region_view(node, g) || !family_of(node.op).pointwise(node, g)) return c;
  // The steps as the loop kernel's code makes and classifies them (LoopCode::chain).
  std::string why;
  std::optional<ElementwiseChain> chain = loop::pointwise_steps(node, why);
  if (!chain) return FloatControls::Both;  // refused by the code anyway
  loop::StepFloatControls steps = loop::step_float_controls(*chain, in, device.has(kCapFloat64));
  if (steps.uses_f64) c = c | FloatControls::F64;
  if (!steps.float_steps.empty()) c = c | FloatControls::FloatMath;
  return c;
}

bool region_compiles(Device& device, const Graph& body) {
  try {
    loop::LoopCode code = region_code(device, body, {});
    (void)code.key();  // its own refusals (float steps beside f64)
    return true;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported) throw;
    return false;
  }
}

const Family& region_family() {
  static const RegionFamily family;
  return family;
}

}  // namespace nxv
