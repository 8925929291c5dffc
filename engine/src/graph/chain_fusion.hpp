// Graph fusion of elementwise chains: an elementwise node (or elementwise_chain) whose result
// only one elementwise node of the same output shape reads, and which is not a graph output,
// becomes one elementwise_chain node with that reader (ops/elementwise/fusion.hpp): one kernel
// and one intermediate buffer fewer. Repeated, so that a run of such nodes is one kernel. Fused
// only where the chain passes the elementwise family's check (at most three input tensors, and
// chain_rounding: the chain keeps the bits of its steps run one by one).
#pragma once
#include "graph/graph.hpp"

namespace nxv {

// `graph` with every such pair fused; value ids change, inputs and outputs stay in order.
Graph fuse_chains(Device& device, const Graph& graph);

}  // namespace nxv
