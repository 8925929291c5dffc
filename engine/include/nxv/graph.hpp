// Graphs of ops and the programs compiled from them: the engine's half of Nx.Vulkan.Compiler.
// A graph's values are its inputs (first) and one result per node; a node is an op of the op
// table with its typed attributes, as an eager op is. A program is a graph compiled for one
// device from its inputs' types and shapes alone: every kernel it needs is compiled when it is
// made, and each run records all of its launches at once on the device's stream.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "nxv/ops.hpp"

namespace nxv {

struct GraphNode {
  OpId op;
  OutSpec out;
  std::vector<uint32_t> inputs;  // value ids
  Attrs attrs;
};

class Graph {
 public:
  // A graph parameter; returns its value id.
  uint32_t input(DType type, const Shape& shape);
  // A node; returns the value id of its result.
  uint32_t add(OpId op, OutSpec out, std::vector<uint32_t> inputs, Attrs attrs = {});
  // A result of the graph (any value: an input, a node's result; one value may be named twice).
  void output(uint32_t value);
  // Donation: graph input `input`'s buffer may hold output number `output` (a position in
  // outputs(), of the input's type and shape) after a run. Honoured in place where the
  // program can write that output over the input safely (ProgramStats::in_place), else the
  // output gets a buffer of its own; either way the caller gives the input up.
  void donate(uint32_t input, size_t output);
  const std::vector<std::pair<uint32_t, size_t>>& donations() const { return donations_; }

  size_t input_count() const { return input_count_; }
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<uint32_t>& outputs() const { return outputs_; }
  const OutSpec& value(uint32_t id) const { return values_.at(id); }
  size_t value_count() const { return values_.size(); }

 private:
  size_t input_count_ = 0;
  std::vector<OutSpec> values_;  // inputs first, then one per node
  std::vector<GraphNode> nodes_;
  std::vector<uint32_t> outputs_;
  std::vector<std::pair<uint32_t, size_t>> donations_;
};

class GraphExecutable;

// What compiling a program made of its graph.
struct ProgramStats {
  size_t nodes = 0;     // in the graph as given
  size_t fused = 0;     // nodes folded into another node's kernel (epilogues)
  size_t launches = 0;  // kernel launches (and host steps) per run
  size_t in_place = 0;  // donations honoured in place
  uint64_t run_bytes = 0;  // allocated per run for results and intermediates (graph/memory_plan.hpp)
};

class Program {
 public:
  ~Program();
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;

  // Runs with inputs of the compiled types and shapes, in any layout and on any buffers: views
  // (strided, broadcast, offset) are first copied to row-major tensors on the same stream, but
  // for row-major views at an offset that keeps the kernels' alignment (a result returned as a
  // view into a packed buffer, passed back), which a program without host steps reads in place.
  // Results are new tensors (or views of them, or of the inputs where the graph returns one).
  std::vector<Tensor> run(Device& device, const std::vector<Tensor>& inputs) const;
  // A run gated on the device: its kernels run only where `gate`'s first element (s32 or u32)
  // is nonzero when the GPU reaches them, without the host reading it; else its results hold
  // whatever their memory held (a caller selects between gated runs' results). Inputs are laid
  // out as run() does, ungated. Unsupported on devices without VK_EXT_conditional_rendering
  // (features.conditional_rendering); InvalidArgument for a program with host steps.
  std::vector<Tensor> run_gated(Device& device, const std::vector<Tensor>& inputs, const Tensor& gate) const;
  // Whether a run records without blocking: the program has no host step (which waits for the
  // GPU). Inputs to lay out are copied by kernels recorded on the stream like the program's.
  bool runs_without_blocking() const;
  // run() where it neither blocks nor compiles (a copy kernel an input's layout needs may not be
  // compiled yet): nullopt, with nothing of the program recorded, where it would.
  std::optional<std::vector<Tensor>> run_if_compiled(Device& device, const std::vector<Tensor>& inputs,
                                                     const Tensor* gate = nullptr) const;
  const ProgramStats& stats() const { return stats_; }
  size_t input_count() const;

 private:
  std::vector<Tensor> run_with(Device& device, const std::vector<Tensor>& inputs, const Tensor* gate) const;
  friend std::shared_ptr<const Program> compile_program(Device&, const Graph&);
  friend std::shared_ptr<const Program> compile_loop_program(Device&, const Graph&, size_t, uint32_t,
                                                             const std::vector<bool>&, bool);
  Program();
  std::unique_ptr<GraphExecutable> exec_;
  ProgramStats stats_;
};

// Checks every node (Unsupported / InvalidArgument naming the node's op and reason), fuses
// what the graph passes fuse and compiles every kernel. Inputs are taken as row-major tensors.
std::shared_ptr<const Program> compile_program(Device& device, const Graph& graph);

// A counted loop as one program of one kernel launch: `body`'s first `state` inputs are the
// loop's state and its outputs (as many, of the same types and shapes) the next state; its
// other inputs are read by every trip. A run takes the body's inputs and returns the state
// after `trips` trips, with the bits of the body's ops run one by one that many times.
// Unsupported, naming the reason, where the body is not one workgroup's work (ops it does not
// compute in a loop kernel, f16 or complex types, values over the shared memory): the caller
// then records the trips as a program (compile_program). Inputs flagged in `vectorized` hold
// independent chains along axis 0 (Nx's vectorized axis, devectorized): each chain runs in a
// workgroup of its own, and every value computed from them keeps that axis first. Without
// flags, the changing state's common axis 0 is tried as chains where some of it has two axes or
// more (taken only where every op of the body keeps them apart), then one workgroup. A `conditional` loop (a `while` whose trips
// are known only by running it) has one more output, its condition on the state a trip starts
// from: the first trip where it is zero ends the loop, and a run returns one more result, a u8
// that is 1 where the loop ended within `trips` (else the caller runs it again on the state).
std::shared_ptr<const Program> compile_loop_program(Device& device, const Graph& body, size_t state, uint32_t trips,
                                                    const std::vector<bool>& vectorized = {}, bool conditional = false);

}  // namespace nxv
