// Graph fusion of elementwise chains: an elementwise node (or elementwise_chain) whose result
// only one elementwise node of the same output shape reads, and which is not a graph output,
// becomes one elementwise_chain node with that reader (ops/elementwise/fusion.hpp): one kernel
// and one intermediate buffer fewer. Repeated, so that a run of such nodes is one kernel. Fused
// only where the chain passes the elementwise family's check (up to three tensors of any
// layout, up to eight each dense like the output or a single element) and
// runs as one kernel (chain_rounding: float math beside f64 code keeps the two apart).
#pragma once
#include "graph/graph.hpp"
#include "ops/family.hpp"

namespace nxv {

// Whether the node's work is elementwise steps (its family's pointwise role; a view such as
// bitcast, or as_type into its own type, has none): what a chain or an epilogue can take.
bool has_elementwise_steps(const GraphNode& node, const Graph& graph);

// Appends the node's steps to `chain`, its inputs read as `operand_of` (one per input), and
// returns the operand holding its result; nullopt (and `chain` partly extended) when one of
// its steps reads an input it does not have.
std::optional<ChainOperand> append_steps(const GraphNode& node, const std::vector<ChainOperand>& operand_of,
                                         ElementwiseChain& chain);

// `graph` with every such pair fused; value ids change, inputs and outputs stay in order.
Graph fuse_chains(Device& device, const Graph& graph);

// An elementwise node that several elementwise nodes (or reductions, as their prologue) read
// (and the graph does not return) is computed again inside each of them, where each fused chain passes the same checks and the
// recomputation is small (a few steps, a few readers): one kernel and one buffer fewer, each
// reader's bits unchanged. Repeated, so that chains grow through shared values (a gradient's
// diamonds, a random generator's rounds).
Graph fuse_shared_chains(Device& device, const Graph& graph);

}  // namespace nxv
