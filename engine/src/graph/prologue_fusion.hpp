// Load prologues: an elementwise node (or chain) whose result only a node taking a prologue
// reads (a reduction: family role takes_prologue) becomes that node's prologue, computed per
// element where the node loads it: softmax's exp inside its sum, a cross-entropy's product
// inside its row sums. The chain's tensors (up to three) take the input's place; the result
// keeps the bits of the ops run one by one (the family's check refuses what would not).
#pragma once
#include <optional>

#include "graph/graph.hpp"
#include "graph/rewrite.hpp"

namespace nxv {

// Node c with node p (its first input's producer) as its prologue, where c takes one and p is
// elementwise over one to three tensors; nullopt otherwise (unchecked: the caller checks).
std::optional<FusedNode> with_producer_as_prologue(const Graph& g, uint32_t p, uint32_t c);

Graph fuse_prologues(Device& device, const Graph& graph);

}  // namespace nxv
