// Graph compilation (the IR is public: nxv/graph.hpp). A graph compiles, through the same
// family lowerings as eager ops, into one Executable that records once and re-runs with new
// buffers. An eager op is a one-node graph (run_one_node); the Nx.Defn compiler's programs
// (graph/program.cpp) are many nodes through the same builder.
#pragma once
#include <variant>
#include <cstdint>
#include <vector>

#include "exec/launch.hpp"
#include "graph/memory_plan.hpp"
#include "nxv/graph.hpp"
#include "nxv/ops.hpp"

namespace nxv {

// A compiled graph: launches over slots, and which slot (and view) holds each value.
class GraphExecutable {
 public:
  // Runs with `inputs` laid out as the ones it was compiled with (same shapes, strides and
  // offsets, but where takes_at_offset; any buffers): new buffers for results and
  // intermediates, then one recording.
  std::vector<Tensor> run(Device& device, const std::vector<Tensor>& inputs, const Gate* gate = nullptr) const;
  // Whether input `i` may be `t`, compiled at offset 0 and given at another: its slot then starts
  // there in its buffer (a result a program returned as a view into a packed buffer, passed back
  // without a copy). Not for executables with host steps, nor where the offset would move the
  // alignment the kernels were compiled for.
  bool takes_at_offset(size_t i, const Tensor& t) const;
  const Executable& executable() const { return exec_; }
  const std::vector<TensorSpec>& input_specs() const { return input_specs_; }
  size_t fused_nodes() const { return fused_nodes_; }
  size_t in_place_donations() const { return in_place_.size(); }
  // Bytes a run allocates (results and intermediates; not results written into donated
  // inputs), with the memory plan or, for comparison, with a buffer per value.
  uint64_t bytes_per_run(bool planned = true) const;

 private:
  friend GraphExecutable compile_graph(Device&, const Graph&, const std::vector<Tensor>&);
  friend GraphExecutable compile_loop_graph(Device&, const Graph&, size_t, uint32_t, const std::vector<bool>&, bool,
                                            const std::vector<Tensor>&);
  friend GraphExecutable compile_graph_with(Device&, const Graph&, const std::vector<Tensor>&, bool, bool*);
  Executable exec_;
  std::vector<TensorSpec> input_specs_;
  std::vector<int64_t> input_slots_;  // -1 for an empty input
  std::vector<uint64_t> slot_bytes_;  // sizes of the buffers made per run
  std::vector<std::pair<uint32_t, Tensor>> outputs_;  // slot, view (its buffer replaced per run)
  size_t fused_nodes_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> in_place_;  // donated input, the output slot it holds
  std::vector<std::pair<uint32_t, std::shared_ptr<Buffer>>> fixed_;  // values computed when compiled
  MemoryPlan memory_;  // intermediates sharing buffers (graph/memory_plan.hpp)
};

// Runs the graph passes (permutations folded into their producers, store epilogues, elementwise
// chains: graph/*_folding.hpp, *_fusion.hpp), then checks every node (Unsupported /
// InvalidArgument with the node's reason) and lowers it.
GraphExecutable compile_graph(Device& device, const Graph& graph, const std::vector<Tensor>& example_inputs);

// A counted loop in one kernel (ops/loop/loop_kernel.cpp): `body` computes the next state (its
// outputs) from the state (its first `state` inputs) and the other inputs, `trips` times; the
// executable's results are the final state. Inputs flagged in `batched` (none where empty) hold
// independent chains along axis 0, one workgroup each. A `conditional` body's last output is its
// condition on the state a trip starts from: a trip where it is zero ends the loop, and the
// executable's last result (u8) says whether it ended so within `trips`. Unsupported (with the
// reason) where the body does not fit one workgroup's kernel.
GraphExecutable compile_loop_graph(Device& device, const Graph& body, size_t state, uint32_t trips,
                                   const std::vector<bool>& batched, bool conditional,
                                   const std::vector<Tensor>& example_inputs);

// The same, with small nodes gathered into regions (graph/region_forming.hpp) where `regions`;
// `formed` (where given) says whether any region formed.
GraphExecutable compile_graph_with(Device& device, const Graph& graph, const std::vector<Tensor>& example_inputs,
                                   bool regions, bool* formed);

// The eager path: `op` as a one-node graph, recorded at once on the device's stream.
Tensor run_one_node(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs, const Attrs& attrs);

struct PreparedOp {
  Tensor result;
  Executable exec;
  std::vector<std::shared_ptr<Buffer>> buffers;
};

// The same where `prepare` is set and running the op would block (a host step that waits for
// the GPU): it is lowered but not run, and returned to be run elsewhere (run_prepared).
std::variant<Tensor, std::shared_ptr<PreparedOp>> run_or_prepare_one_node(Device& device, OpId op, const OutSpec& out,
                                                                          const std::vector<Tensor>& inputs,
                                                                          const Attrs& attrs, bool prepare);

}  // namespace nxv
