// The loop kernel: a counted or data-dependent loop whose body is one workgroup's work, every
// trip in one dispatch (ops/loop/loop_code.hpp generates its code).
#include <cstddef>
#include <optional>

#include "device/device_impl.hpp"
#include "graph/chain_fusion.hpp"
#include "graph/fold.hpp"
#include "graph/graph.hpp"
#include "graph/simplify.hpp"
#include "ops/loop/loop_code.hpp"
#include "ops/loop/loop_push.h"

namespace nxv {

using loop::LoopCode;
using loop::refuse;

GraphExecutable compile_loop_graph(Device& device, const Graph& body, size_t state, uint32_t trips,
                                   const std::vector<bool>& batched, bool conditional,
                                   const std::vector<Tensor>& example_inputs) {
  if (example_inputs.size() != body.input_count())
    throw Error(ErrorKind::InvalidArgument, "the loop body takes " + std::to_string(body.input_count()) + " inputs");
  if (state > body.input_count() || body.outputs().size() != state + (conditional ? 1 : 0))
    throw Error(ErrorKind::InvalidArgument,
                "a loop body's outputs are its state (its first inputs, as many), then a conditional loop's condition");
  for (size_t j = 0; j < state; ++j) {
    const OutSpec& in = body.value(uint32_t(j));
    const OutSpec& out = body.value(body.outputs()[j]);
    if (in.type != out.type || in.shape != out.shape)
      throw Error(ErrorKind::InvalidArgument, "a loop body's output " + std::to_string(j) + " differs from its state's type or shape");
  }
  if (trips == 0) refuse("a loop of no trips");
  if (!batched.empty() && batched.size() != body.input_count())
    throw Error(ErrorKind::InvalidArgument, "a loop body's vectorized inputs: one flag per input");
  std::vector<bool> batched_inputs = batched.empty() ? std::vector<bool>(body.input_count(), false) : batched;
  // Chains: the common extent of the vectorized inputs' axis 0, each chain one workgroup.
  int64_t chains = 1;
  for (uint32_t i = 0; i < body.input_count(); ++i) {
    if (!batched_inputs[i]) continue;
    const Shape& shape = body.value(i).shape;
    if (shape.empty() || (chains > 1 && shape[0] != chains))
      throw Error(ErrorKind::InvalidArgument, "a loop body's vectorized inputs need one common extent on axis 0");
    chains = shape[0];
  }
  const uint32_t max_groups = device.impl().core->info().max_workgroup_count[0];
  if (chains > int64_t(max_groups)) refuse("more chains than one dispatch's workgroups");
  if (body.input_count() > NXV_LOOP_MAX_BUFFERS) refuse("more than " + std::to_string(NXV_LOOP_MAX_BUFFERS) + " buffers");
  const Graph g = without_dead_nodes(fuse_chains(device, constants_per_reader(without_duplicates(simplified(body, device)))));
  std::vector<bool> invariant(state);
  for (size_t j = 0; j < state; ++j) invariant[j] = g.outputs()[j] == uint32_t(j);
  // Every node as its eager op would be checked (the invalid ones named).
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const GraphNode& node = g.nodes()[n];
    std::vector<TensorSpec> specs;
    for (uint32_t x : node.inputs) {
      const OutSpec& s = g.value(x);
      specs.push_back({s.type, s.shape, row_major_strides(s.shape), 0});
    }
    Support support = check_op(device, node.op, node.out, std::span<const TensorSpec>(specs), node.attrs);
    if (!support) throw Error(support.kind, support.reason);
  }
  // Inputs staged in shared memory where everything fits, else read from their buffers.
  std::vector<std::pair<uint32_t, Tensor>> fixed;
  std::optional<LoopCode> code;
  for (bool stage : {true, false}) {
    fixed.clear();
    code.emplace(device, g, state, invariant, batched_inputs, chains, conditional, uint32_t(body.input_count()), stage);
    code->generate(fixed);
    if (code->fits_shared_memory()) break;
  }
  const Kernel& kernel = device.impl().kernels.get(code->key());

  LaunchBuilder builder;
  GraphExecutable exec;
  LoopPush push{};
  push.trips = trips;
  std::vector<AddressPatch> patches;  // into the parameter block
  auto address = [&](uint32_t k, uint32_t slot) {
    patches.push_back({uint32_t(offsetof(LoopParams, addr) + k * sizeof(uint64_t)), {slot, 0}});
  };
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < body.input_count(); ++i) {
    const Tensor& t = example_inputs[i];
    exec.input_specs_.push_back(spec_of(t));
    if (!t.buffer) refuse("an empty input");
    uint32_t slot = builder.bind(t.buffer);
    exec.input_slots_.push_back(int64_t(slot));
    slots.push_back(slot);
    address(i, slot);
  }
  for (auto& [k, t] : fixed) {
    uint32_t slot = builder.bind(t.buffer);
    exec.fixed_.emplace_back(slot, t.buffer);
    address(k, slot);
  }
  std::vector<std::pair<uint32_t, Tensor>> outputs;
  for (size_t j = 0; j < state; ++j) {
    auto [input, k] = code->outputs()[j];
    if (input >= 0) {
      outputs.emplace_back(slots[size_t(input)], example_inputs[size_t(input)]);
      continue;
    }
    Tensor out = empty(device, body.value(uint32_t(j)).type, body.value(uint32_t(j)).shape);
    uint32_t slot = builder.bind(out.buffer);
    address(k, slot);
    outputs.emplace_back(slot, out);
  }
  if (conditional) {
    Tensor done = empty(device, DType::U8, {});
    uint32_t slot = builder.bind(done.buffer);
    address(code->done_address(), slot);
    outputs.emplace_back(slot, done);
  }
  Launch& l = builder.launch(kernel, {uint32_t(chains), 1, 1}, push, {});
  builder.params(l, LoopParams{}, offsetof(LoopPush, params_addr), std::move(patches));
  for (uint32_t s : slots) builder.use(l, s, Access::Read);
  for (auto& [slot, buffer] : exec.fixed_) builder.use(l, slot, Access::Read);
  for (size_t j = 0; j < state; ++j)
    if (code->outputs()[j].first < 0) builder.use(l, outputs[j].first, Access::Write);
  if (conditional) builder.use(l, outputs.back().first, Access::Write);
  for (const auto& b : builder.buffers()) exec.slot_bytes_.push_back(b->size());
  exec.outputs_ = std::move(outputs);
  exec.exec_ = std::move(builder).finish();
  exec.memory_.shared_of_slot.assign(exec.slot_bytes_.size(), -1);
  return exec;
}

}  // namespace nxv
