// Graph fusion of store epilogues: a node whose family takes epilogues (Family::takes_epilogue)
// and whose result only one elementwise node (or elementwise_chain) reads, of the producer's
// output shape, and which is not a graph output, becomes one node of the producer's op with that node's work as its epilogue
// (ops/elementwise/store_epilogue.hpp): one kernel fewer, and no product written and read
// back. Repeated, so that a product followed by a bias add and an activation is one node.
// Fused only where the fused node passes its family's check (the chain keeps its steps' bits:
// chain_rounding; at most the family's epilogue_tensors() other tensors: four).
#pragma once
#include "graph/graph.hpp"

namespace nxv {

// `graph` with every such pair fused; value ids change, inputs and outputs stay in order.
Graph fuse_epilogues(Device& device, const Graph& graph);

}  // namespace nxv
