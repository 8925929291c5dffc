#include "graph/graph.hpp"
#include "graph/region_forming.hpp"

#include <algorithm>

#include "device/device_impl.hpp"
#include "graph/chain_fusion.hpp"
#include "graph/epilogue_fusion.hpp"
#include "graph/donation.hpp"
#include "graph/fold.hpp"
#include "graph/level_schedule.hpp"
#include "graph/prologue_fusion.hpp"
#include "graph/permutation_folding.hpp"
#include "graph/simplify.hpp"
#include "ops/family.hpp"

namespace nxv {

uint32_t Graph::input(DType type, const Shape& shape) {
  if (!nodes_.empty()) throw Error(ErrorKind::InvalidArgument, "graph inputs come before its nodes");
  values_.push_back({type, shape});
  ++input_count_;
  return uint32_t(values_.size() - 1);
}

uint32_t Graph::add(OpId op, OutSpec out, std::vector<uint32_t> inputs, Attrs attrs) {
  for (uint32_t v : inputs)
    if (v >= values_.size()) throw Error(ErrorKind::InvalidArgument, "a graph node reads an undefined value");
  nodes_.push_back({op, out, std::move(inputs), std::move(attrs)});
  values_.push_back(std::move(out));
  return uint32_t(values_.size() - 1);
}

void Graph::output(uint32_t value) {
  if (value >= values_.size()) throw Error(ErrorKind::InvalidArgument, "a graph output names an undefined value");
  outputs_.push_back(value);
}

void Graph::donate(uint32_t input, size_t output) {
  if (input >= input_count_ || output >= outputs_.size())
    throw Error(ErrorKind::InvalidArgument, "a donation names an input or an output the graph does not have");
  const OutSpec& in = values_[input];
  const OutSpec& out = values_[outputs_[output]];
  if (in.type != out.type || in.shape != out.shape)
    throw Error(ErrorKind::InvalidArgument, "a donated input needs an output of its type and shape");
  for (const auto& [i, o] : donations_)
    if (i == input || o == output)
      throw Error(ErrorKind::InvalidArgument, "an input is donated once, to an output no other input is donated to");
  donations_.emplace_back(input, output);
}

namespace {

// Lowers one node whose inputs are `inputs`; returns its result (a new tensor, or a view when
// the family gives one).
Tensor lower_node(Device& device, OpId op, const OutSpec& out_spec, const Attrs& attrs, const std::vector<Tensor>& inputs,
                  LaunchBuilder& builder) {
  const Family& family = family_of(op);
  // Reused per thread (their vectors keep their capacity): read by the check alone, which
  // lowers nothing, so no nested lowering on this thread sees them change.
  thread_local std::vector<TensorSpec> specs;
  specs.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.buffer && t.size() > 0) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
    specs[i].type = t.type;
    specs[i].shape.assign(t.shape.begin(), t.shape.end());
    specs[i].strides.assign(t.strides.begin(), t.strides.end());
    specs[i].offset = t.offset;
  }
  Support support = check_op(device, op, out_spec, std::span<const TensorSpec>(specs), attrs);
  if (!support) throw Error(support.kind, support.reason);
  if (auto view = family.view_result(op, out_spec, inputs, attrs)) return *view;
  Tensor out = empty(device, out_spec.type, out_spec.shape);
  if (out.size() == 0) return out;
  std::vector<LowerInput> lowered;
  lowered.reserve(inputs.size());
  for (const auto& t : inputs) lowered.push_back({t, t.buffer ? builder.bind(t.buffer) : 0u});
  uint32_t out_slot = builder.bind(out.buffer);
  family.lower(LowerArgs{device, op, out_spec, lowered, out, out_slot, attrs, builder});
  return out;
}

}  // namespace

Tensor run_one_node(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return std::get<Tensor>(run_or_prepare_one_node(device, op, out, inputs, attrs, false));
}

std::variant<Tensor, std::shared_ptr<PreparedOp>> run_or_prepare_one_node(Device& device, OpId op, const OutSpec& out,
                                                                          const std::vector<Tensor>& inputs,
                                                                          const Attrs& attrs, bool prepare) {
  LaunchBuilder builder;
  // CPU drivers: with nothing on the GPU, a small op the host can compute exactly needs no
  // recording, submission or wait.
  DeviceImpl& impl = device.impl();
  if (cpu_paths(impl.core->profile())) builder.allow_immediate_host(impl.stream);
  Tensor result = lower_node(device, op, out, attrs, inputs, builder);
  std::vector<std::shared_ptr<Buffer>> buffers = builder.buffers();
  Executable exec = std::move(builder).finish();
  if (prepare && exec.has_host_steps()) {
    if (exec.run_at_once(impl.stream, buffers)) return result;
    return std::make_shared<PreparedOp>(PreparedOp{std::move(result), std::move(exec), std::move(buffers)});
  }
  exec.run(impl.stream, impl.kernels.layout(), buffers);
  return result;
}

// Nodes over values known when a program compiles are computed then up to this size each.
constexpr uint64_t kMaxFoldedBytes = 4096;

GraphExecutable compile_graph(Device& device, const Graph& given, const std::vector<Tensor>& example_inputs) {
  if (example_inputs.size() != given.input_count())
    throw Error(ErrorKind::InvalidArgument, "the graph takes " + std::to_string(given.input_count()) + " inputs");
  bool formed = false;
  try {
    return compile_graph_with(device, given, example_inputs, true, &formed);
  } catch (const Error& e) {
    // A region formed over row-major stand-ins that its real inputs' layouts refuse: the graph
    // again, a kernel per node (a graph refused without regions is refused as it is).
    if (e.kind() != ErrorKind::Unsupported || !formed) throw;
    return compile_graph_with(device, given, example_inputs, false, nullptr);
  }
}

GraphExecutable compile_graph_with(Device& device, const Graph& given, const std::vector<Tensor>& example_inputs,
                                   bool regions, bool* formed) {
  // Constants go into the chains that read them before a product takes its consumers' chain.
  const Graph folded =
      fuse_chains(device, constants_per_reader(fold_permutations(device, without_duplicates(simplified(given, device)))));
  const Graph chained = regions ? form_regions(device, folded, given.donations()) : folded;
  if (formed)
    *formed = std::any_of(chained.nodes().begin(), chained.nodes().end(), [](const GraphNode& n) { return n.op == OpId::region; });
  const Graph fused_around_products =
      fuse_epilogues(device, fuse_prologues(device, fuse_chains(device, fuse_shared_chains(device, chained))));
  const Graph graph = without_dead_nodes(fuse_operand_prologues(device, fused_around_products));
  LaunchBuilder builder;
  GraphExecutable g;
  g.fused_nodes_ = given.nodes().size() - graph.nodes().size();
  std::vector<Tensor> values(example_inputs.begin(), example_inputs.end());
  for (const auto& t : example_inputs) {
    g.input_specs_.push_back(spec_of(t));
    g.input_slots_.push_back(t.buffer ? int64_t(builder.bind(t.buffer)) : -1);
  }
  std::vector<bool> output(graph.value_count(), false);
  for (uint32_t v : graph.outputs()) output[v] = true;
  std::vector<std::shared_ptr<Buffer>> computed_once;
  // Values known when the program compiles.
  std::vector<bool> fixed(graph.value_count(), false);
  for (const auto& node : graph.nodes()) {
    std::vector<Tensor> inputs;
    for (uint32_t v : node.inputs) inputs.push_back(values[v]);
    // A node that reads no tensor (a constant no chain took, iota, eye), or a small one that
    // reads only such values (a slice of a literal at a constant index), is computed now,
    // once; its buffer is bound to every run (never an output, which a caller could donate).
    bool known = std::all_of(node.inputs.begin(), node.inputs.end(), [&](uint32_t v) { return fixed[v]; });
    bool small = node.inputs.empty() || uint64_t(shape_size(node.out.shape)) * dtype_size(node.out.type) <= kMaxFoldedBytes;
    if (known && small && !output[values.size()]) {
      Tensor t = run_one_node(device, node.op, node.out, inputs, node.attrs);
      if (t.buffer) computed_once.push_back(t.buffer);
      fixed[values.size()] = true;
      values.push_back(std::move(t));
      continue;
    }
    values.push_back(lower_node(device, node.op, node.out, node.attrs, inputs, builder));
  }
  for (const auto& b : computed_once) g.fixed_.emplace_back(builder.bind(b), b);
  const auto& buffers = builder.buffers();
  for (const auto& b : buffers) g.slot_bytes_.push_back(b->size());
  for (uint32_t v : graph.outputs()) {
    const Tensor& t = values[v];
    uint32_t slot = t.buffer ? builder.bind(t.buffer) : 0u;
    g.outputs_.emplace_back(slot, t);
  }
  g.exec_ = std::move(builder).finish();
  schedule_by_level(g.exec_);
  g.in_place_ = in_place_donations(given, graph, g.exec_, g.input_slots_, g.outputs_, g.slot_bytes_);
  // What a run allocates for intermediates only: not inputs, results or values computed now.
  std::vector<bool> planned(g.slot_bytes_.size(), true);
  for (int64_t s : g.input_slots_)
    if (s >= 0) planned[size_t(s)] = false;
  for (const auto& [slot, view] : g.outputs_) planned[slot] = false;
  for (const auto& [slot, buffer] : g.fixed_) planned[slot] = false;
  g.memory_ = plan_memory(g.exec_, g.slot_bytes_, planned);
  return g;
}

uint64_t GraphExecutable::bytes_per_run(bool planned) const {
  std::vector<bool> made(slot_bytes_.size(), true);
  for (int64_t s : input_slots_)
    if (s >= 0) made[size_t(s)] = false;
  for (const auto& [slot, buffer] : fixed_) made[slot] = false;
  for (const auto& [input, slot] : in_place_) made[slot] = false;  // the donated buffer, where it serves
  uint64_t bytes = 0;
  for (size_t s = 0; s < made.size(); ++s)
    if (made[s] && (!planned || memory_.shared_of_slot[s] < 0)) bytes += slot_bytes_[s];
  if (planned)
    for (uint64_t b : memory_.shared_bytes) bytes += b;
  return bytes;
}

bool GraphExecutable::takes_at_offset(size_t i, const Tensor& t) const {
  // The largest alignment a kernel reads with (four-element vectors of 16-byte elements).
  constexpr uint64_t kAlignment = 64;
  if (i >= input_specs_.size() || input_slots_[i] < 0 || exec_.has_host_steps() || !t.buffer) return false;
  const TensorSpec& want = input_specs_[i];
  const uint64_t start = uint64_t(t.offset) * dtype_size(t.type);
  const size_t slot = size_t(input_slots_[i]);
  const bool sole = std::count(input_slots_.begin(), input_slots_.end(), int64_t(slot)) == 1;
  return want.offset == 0 && t.offset > 0 && t.type == want.type && t.shape == want.shape && t.strides == want.strides &&
         sole && start % kAlignment == 0 && t.buffer->chunks().size() == 1 && start + slot_bytes_[slot] <= t.buffer->size();
}

std::vector<Tensor> GraphExecutable::run(Device& device, const std::vector<Tensor>& inputs, const Gate* gate) const {
  if (inputs.size() != input_specs_.size())
    throw Error(ErrorKind::InvalidArgument, "the graph takes " + std::to_string(input_specs_.size()) + " inputs");
  std::vector<std::shared_ptr<Buffer>> buffers(slot_bytes_.size());
  std::vector<uint64_t> slot_offsets;  // where an input's slot starts in its buffer, if anywhere but 0
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& want = input_specs_[i];
    const Tensor& t = inputs[i];
    const bool at_offset = t.offset != want.offset && takes_at_offset(i, t);
    if (t.type != want.type || t.shape != want.shape || t.strides != want.strides || (t.offset != want.offset && !at_offset))
      throw Error(ErrorKind::InvalidArgument, "a graph input is laid out differently from the one it was compiled with");
    if (input_slots_[i] < 0) continue;
    if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
    auto& slot = buffers[size_t(input_slots_[i])];
    if (slot && slot != t.buffer)
      throw Error(ErrorKind::InvalidArgument, "graph inputs compiled as one buffer were given two");
    slot = t.buffer;
    if (at_offset) {
      slot_offsets.resize(slot_bytes_.size(), 0);
      slot_offsets[size_t(input_slots_[i])] = uint64_t(t.offset) * dtype_size(t.type);
    }
  }
  for (const auto& [slot, buffer] : fixed_) buffers[slot] = buffer;
  for (const auto& [input, slot] : in_place_) {
    // Not an input taken at an offset: its result would start at the buffer's start.
    if (inputs[input].offset != input_specs_[input].offset) continue;
    const auto& given = inputs[input].buffer;
    // Not where another input reads the same buffer (the write would reach it too).
    bool shared = std::count_if(inputs.begin(), inputs.end(), [&](const Tensor& t) { return t.buffer == given; }) > 1;
    if (given && !shared && given->size() >= slot_bytes_[slot]) buffers[slot] = given;
  }
  std::vector<std::shared_ptr<Buffer>> shared(memory_.shared_bytes.size());
  for (size_t s = 0; s < buffers.size(); ++s) {
    if (buffers[s]) continue;
    int32_t k = memory_.shared_of_slot[s];
    if (k < 0) {
      buffers[s] = device.impl().allocate(slot_bytes_[s]);
      continue;
    }
    auto& b = shared[size_t(k)];
    if (!b) b = device.impl().allocate(memory_.shared_bytes[size_t(k)]);
    buffers[s] = b;
  }
  exec_.run(device.impl().stream, device.impl().kernels.layout(), buffers, gate, slot_offsets);
  std::vector<Tensor> outs;
  for (const auto& [slot, view] : outputs_) {
    Tensor t = view;
    if (t.buffer) t.buffer = buffers[slot];
    outs.push_back(std::move(t));
  }
  return outs;
}

}  // namespace nxv
