// Programs: graphs compiled from their inputs' types and shapes (nxv/graph.hpp).
#include <optional>
#include <string>

#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "kernels/kernel_cache.hpp"

namespace nxv {

Program::Program() = default;
Program::~Program() = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;

size_t Program::input_count() const { return exec_->input_specs().size(); }

namespace {

// Row-major at offset 0: the layout a program compiles its inputs for.
bool row_major(const Tensor& t) { return t.offset == 0 && t.strides == row_major_strides(t.shape); }

}  // namespace

std::shared_ptr<const Program> compile_program(Device& device, const Graph& graph) {
  // Lowering binds buffers and sizes kernels from real tensors: row-major stand-ins, freed
  // once the kernels are compiled (a run binds its own buffers to the same slots).
  std::vector<Tensor> examples;
  examples.reserve(graph.input_count());
  for (uint32_t i = 0; i < graph.input_count(); ++i) examples.push_back(empty(device, graph.value(i).type, graph.value(i).shape));
  std::shared_ptr<Program> program(new Program());
  program->exec_ = std::make_unique<GraphExecutable>(compile_graph(device, graph, examples));
  program->stats_ = {graph.nodes().size(), program->exec_->fused_nodes(),
                     program->exec_->executable().launches().size(), program->exec_->in_place_donations(),
                     program->exec_->bytes_per_run()};
  return program;
}

std::shared_ptr<const Program> compile_loop_program(Device& device, const Graph& body, size_t state, uint32_t trips,
                                                    const std::vector<bool>& vectorized, bool conditional) {
  std::vector<Tensor> examples;
  examples.reserve(body.input_count());
  for (uint32_t i = 0; i < body.input_count(); ++i) examples.push_back(empty(device, body.value(i).type, body.value(i).shape));
  std::shared_ptr<Program> program(new Program());
  std::vector<bool> chains = vectorized;
  if (chains.empty()) {
    // Unsaid, the changing state's common axis 0 is tried as independent chains: the loop
    // kernel takes a body as chains only where every op keeps them apart, so the guess never
    // changes a result; where it does not take them, the loop runs in one workgroup.
    // A state of vectors only (no changing state of rank 2 or more) is one chain: a workgroup
    // per element would run scalars.
    chains.assign(body.input_count(), false);
    int64_t extent = -1;
    bool matrices = false;
    for (size_t j = 0; j < state && extent != 0; ++j) {
      const Shape& shape = body.value(uint32_t(j)).shape;
      // Unchanged state and scalars (a counter) are not chains: every workgroup reads them.
      if (shape.empty() || body.outputs().at(j) == uint32_t(j)) continue;
      matrices = matrices || shape.size() >= 2;
      if (extent > 0 && shape[0] != extent) extent = 0;
      else extent = shape[0], chains[j] = true;
    }
    if (extent <= 1 || !matrices) chains.clear();
  }
  try {
    program->exec_ = std::make_unique<GraphExecutable>(compile_loop_graph(device, body, state, trips, chains, conditional, examples));
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported || !vectorized.empty() || chains.empty()) throw;
    try {
      program->exec_ = std::make_unique<GraphExecutable>(compile_loop_graph(device, body, state, trips, {}, conditional, examples));
    } catch (const Error& again) {
      if (again.kind() != ErrorKind::Unsupported) throw;
      throw Error(ErrorKind::Unsupported, std::string(again.what()) + " (as chains along axis 0: " + e.what() + ")");
    }
  }
  program->stats_ = {body.nodes().size() * (conditional ? 1 : trips), 0, program->exec_->executable().launches().size(), 0,
                     program->exec_->bytes_per_run()};
  return program;
}

bool Program::runs_without_blocking() const { return !exec_->executable().has_host_steps(); }

std::optional<std::vector<Tensor>> Program::run_if_compiled(Device& device, const std::vector<Tensor>& inputs,
                                                            const Tensor* gate) const {
  if (!runs_without_blocking()) return std::nullopt;
  try {
    CompileFreeScope no_compiles;
    return run_with(device, inputs, gate);
  } catch (const KernelNotReady&) {
    return std::nullopt;  // an input's copy kernel: copies recorded so far are dropped unread
  }
}

std::vector<Tensor> Program::run(Device& device, const std::vector<Tensor>& inputs) const {
  return run_with(device, inputs, nullptr);
}

std::vector<Tensor> Program::run_gated(Device& device, const std::vector<Tensor>& inputs, const Tensor& gate) const {
  return run_with(device, inputs, &gate);
}

std::vector<Tensor> Program::run_with(Device& device, const std::vector<Tensor>& inputs, const Tensor* gate_tensor) const {
  std::optional<Gate> gate;
  if (gate_tensor) {
    const Tensor& g = *gate_tensor;
    if (!device.info().features.conditional_rendering)
      throw Error(ErrorKind::Unsupported, "device '" + device.info().name +
                                              "' cannot gate a run on the device (no VK_EXT_conditional_rendering)");
    if ((g.type != DType::S32 && g.type != DType::U32) || g.size() == 0)
      throw Error(ErrorKind::InvalidArgument, "a program's gate is an s32 or u32 tensor of at least one element");
    if (!g.buffer) throw Error(ErrorKind::Deallocated, "the gate tensor was deallocated");
    gate = Gate{g.buffer, uint64_t(g.offset) * 4};
  }
  const auto& specs = exec_->input_specs();
  if (inputs.size() != specs.size())
    throw Error(ErrorKind::InvalidArgument, "the program takes " + std::to_string(specs.size()) + " inputs, got " +
                                                std::to_string(inputs.size()));
  std::vector<Tensor> laid_out;
  laid_out.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.type != specs[i].type || t.shape != specs[i].shape)
      throw Error(ErrorKind::InvalidArgument, "input " + std::to_string(i) + " of the program has another type or shape than the one it was compiled for");
    if (t.size() == 0 || row_major(t) || exec_->takes_at_offset(i, t)) {
      laid_out.push_back(t);
      continue;
    }
    if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
    // A dense view at offset 0 whose strides differ only on size-1 axes is row-major already.
    Tensor dense = t.is_contiguous() && t.offset == 0 ? t : contiguous(device, t);
    dense.strides = row_major_strides(dense.shape);
    laid_out.push_back(std::move(dense));
  }
  std::vector<Tensor> outputs = exec_->run(device, laid_out, gate ? &*gate : nullptr);
  // A compiled call is a whole unit of work: on an idle GPU it is submitted at once and starts
  // while the caller returns, where the stream's deferral (meant to batch small eager ops)
  // would hold it until someone waits. Behind work in flight (a training loop's steps, none
  // read back) the deferral batches calls into shared submissions as before.
  device.impl().stream.flush_if_dry();
  return outputs;
}

}  // namespace nxv
