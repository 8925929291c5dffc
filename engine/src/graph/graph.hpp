// The graph IR: values (graph inputs and node results) and nodes (an op of the op table with
// its typed attributes). A graph compiles, through the same family lowerings as eager ops,
// into one Executable that records once and re-runs with new buffers. An eager op is a
// one-node graph (run_one_node); the Nx.Defn compiler adds many nodes through the same builder.
#pragma once
#include <cstdint>
#include <vector>

#include "exec/launch.hpp"
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
  void output(uint32_t value) { outputs_.push_back(value); }

  size_t input_count() const { return input_count_; }
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<uint32_t>& outputs() const { return outputs_; }
  const OutSpec& value(uint32_t id) const { return values_.at(id); }

 private:
  size_t input_count_ = 0;
  std::vector<OutSpec> values_;  // inputs first, then one per node
  std::vector<GraphNode> nodes_;
  std::vector<uint32_t> outputs_;
};

// A compiled graph: launches over slots, and which slot (and view) holds each value.
class GraphExecutable {
 public:
  // Runs with `inputs` laid out as the ones it was compiled with (same shapes, strides and
  // offsets; any buffers): new buffers for results and intermediates, then one recording.
  std::vector<Tensor> run(Device& device, const std::vector<Tensor>& inputs) const;
  const Executable& executable() const { return exec_; }

 private:
  friend GraphExecutable compile_graph(Device&, const Graph&, const std::vector<Tensor>&);
  Executable exec_;
  std::vector<TensorSpec> input_specs_;
  std::vector<int64_t> input_slots_;  // -1 for an empty input
  std::vector<uint64_t> slot_bytes_;  // sizes of the buffers made per run
  std::vector<std::pair<uint32_t, Tensor>> outputs_;  // slot, view (its buffer replaced per run)
};

// Fuses what graph passes fuse (a dot or conv and its elementwise consumer: graph/epilogue_fusion.hpp),
// then checks every node (Unsupported / InvalidArgument with the node's reason) and lowers it.
GraphExecutable compile_graph(Device& device, const Graph& graph, const std::vector<Tensor>& example_inputs);

// The eager path: `op` as a one-node graph, recorded at once on the device's stream.
Tensor run_one_node(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs, const Attrs& attrs);

}  // namespace nxv
