// A small program in one launch: every node of a program whose values are all small runs in
// one workgroup of the loop kernel's generated code (ops/loop/loop_code.hpp, one trip, no
// state), where the graph's own lowering would launch a kernel per node with a barrier
// between dependent ones. Each launch so saved is the few microseconds a dependent launch
// costs on a GPU, more than a workgroup's work on values this small.
#include <cstddef>
#include <optional>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "graph/chain_fusion.hpp"
#include "graph/fold.hpp"
#include "graph/graph.hpp"
#include "graph/simplify.hpp"
#include "ops/loop/loop_code.hpp"
#include "ops/loop/loop_push.h"

namespace nxv {

namespace {

// Values of at most this many elements each (a workgroup's 256 invocations take 64 apiece).
constexpr int64_t kRegionElements = 16384;
// Nodes after fusion, at most: the generated code grows with them, and so does its compile.
constexpr size_t kRegionNodes = 1024;

bool small_values(const Graph& g) {
  for (uint32_t v = 0; v < g.value_count(); ++v)
    if (shape_size(g.value(v).shape) > kRegionElements) return false;
  return true;
}

// Nodes that would launch a kernel of their own: not views, not values known when compiled.
size_t launching_nodes(const Graph& g) {
  size_t count = 0;
  for (const GraphNode& node : g.nodes()) {
    if (node.inputs.empty()) continue;
    if (node.inputs.size() == 1) {
      const OutSpec& s = g.value(node.inputs[0]);
      Tensor layout;
      layout.type = s.type, layout.shape = s.shape, layout.strides = row_major_strides(s.shape);
      auto view = family_of(node.op).view_result(node.op, node.out, {layout}, node.attrs);
      if (view && view->type == s.type) continue;
    }
    ++count;
  }
  return count;
}

}  // namespace

std::optional<GraphExecutable> compile_region_graph(Device& device, const Graph& given,
                                                    const std::vector<Tensor>& example_inputs) {
  if (tuning().program_region == Toggle::Off) return std::nullopt;
  // Donations are honoured in place by the graph's own lowering; a region writes new buffers.
  if (!given.donations().empty() || given.outputs().empty() || !small_values(given)) return std::nullopt;
  const Graph g = without_dead_nodes(fuse_chains(device, constants_per_reader(without_duplicates(simplified(given, device)))));
  if (g.nodes().size() > kRegionNodes || launching_nodes(g) < 2 || !small_values(g)) return std::nullopt;
  for (const GraphNode& node : g.nodes()) {
    std::vector<TensorSpec> specs;
    for (uint32_t x : node.inputs) {
      const OutSpec& s = g.value(x);
      specs.push_back({s.type, s.shape, row_major_strides(s.shape), 0});
    }
    if (!check_op(device, node.op, node.out, std::span<const TensorSpec>(specs), node.attrs)) return std::nullopt;
  }
  std::vector<std::pair<uint32_t, Tensor>> fixed;
  std::optional<loop::LoopCode> code;
  try {
    const std::vector<bool> none(g.input_count(), false);
    for (bool stage : {true, false}) {
      fixed.clear();
      code.emplace(device, g, 0, std::vector<bool>{}, none, 1, false, uint32_t(g.input_count()), stage);
      code->as_program();
      code->generate(fixed);
      if (code->fits_shared_memory()) break;
    }
    const Kernel& kernel = device.impl().kernels.get(code->key());

    LaunchBuilder builder;
    GraphExecutable exec;
    LoopPush push{};
    push.trips = 1;
    std::vector<AddressPatch> patches;  // into the parameter block
    auto address = [&](uint32_t k, uint32_t slot) {
      patches.push_back({uint32_t(offsetof(LoopParams, addr) + k * sizeof(uint64_t)), {slot, 0}});
    };
    std::vector<uint32_t> inputs;
    for (uint32_t i = 0; i < g.input_count(); ++i) {
      const Tensor& t = example_inputs[i];
      exec.input_specs_.push_back(spec_of(t));
      if (!t.buffer) return std::nullopt;  // an empty input
      uint32_t slot = builder.bind(t.buffer);
      exec.input_slots_.push_back(int64_t(slot));
      inputs.push_back(slot);
      address(i, slot);
    }
    for (auto& [k, t] : fixed) {
      uint32_t slot = builder.bind(t.buffer);
      exec.fixed_.emplace_back(slot, t.buffer);
      address(k, slot);
    }
    std::vector<std::pair<uint32_t, Tensor>> outputs;
    for (size_t j = 0; j < g.outputs().size(); ++j) {
      const OutSpec& spec = g.value(g.outputs()[j]);
      Tensor out = empty(device, spec.type, spec.shape);
      uint32_t slot = builder.bind(out.buffer);
      address(code->outputs()[j].second, slot);
      outputs.emplace_back(slot, out);
    }
    Launch& l = builder.launch(kernel, {1, 1, 1}, push, {});
    builder.params(l, LoopParams{}, offsetof(LoopPush, params_addr), std::move(patches));
    for (uint32_t s : inputs) builder.use(l, s, Access::Read);
    for (auto& [slot, buffer] : exec.fixed_) builder.use(l, slot, Access::Read);
    for (auto& [slot, out] : outputs) builder.use(l, slot, Access::Write);
    for (const auto& b : builder.buffers()) exec.slot_bytes_.push_back(b->size());
    exec.outputs_ = std::move(outputs);
    exec.fused_nodes_ = given.nodes().size() - 1;
    exec.exec_ = std::move(builder).finish();
    exec.memory_.shared_of_slot.assign(exec.slot_bytes_.size(), -1);
    return exec;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported) throw;
    return std::nullopt;  // the graph's own lowering takes it
  }
}

}  // namespace nxv
