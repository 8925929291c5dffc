// Load prologues: an elementwise node (or chain) whose result only a node taking a prologue
// reads (a reduction: family role takes_prologue) becomes that node's prologue, computed per
// element where the node loads it: softmax's exp inside its sum, a cross-entropy's product
// inside its row sums. The chain's tensors (up to three) take the input's place; the result
// keeps the bits of the ops run one by one (the family's check refuses what would not).
// Operand prologues: likewise a chain over one tensor that a product reads as an operand.
#pragma once
#include <optional>

#include "graph/graph.hpp"
#include "graph/rewrite.hpp"

namespace nxv {

// Node c with node p (its first input's producer) as its prologue, where c takes one and p is
// elementwise over one to three tensors; nullopt otherwise (unchecked: the caller checks).
std::optional<FusedNode> with_producer_as_prologue(const Graph& g, uint32_t p, uint32_t c);

Graph fuse_prologues(Device& device, const Graph& graph);

// Node c with node p as the prologue of each own operand of c that p's result is (a product
// reading relu(z) then reads z), where c's family takes operand prologues and p is elementwise
// over one tensor of its result's type and shape; nullopt otherwise (unchecked).
std::optional<FusedNode> with_producer_as_operand_prologue(const Graph& g, uint32_t p, uint32_t c);

// Operand prologues where the producer's only reader takes one (run after the epilogues, which
// a producer that is a product would rather take); several readers: fuse_shared_chains.
Graph fuse_operand_prologues(Device& device, const Graph& graph);

}  // namespace nxv
