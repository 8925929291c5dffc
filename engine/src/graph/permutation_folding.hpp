// Graph folding of permutations: a node that only permutes its input's axes (a transpose:
// Family::permutation) and is its producer's only reader, where the producer can compute its
// result in the permuted order for no more work and with the same bits
// (Family::with_permuted_result; dot: transpose(dot(a, b)) is dot(b, a), as Nx's gradient of a
// product gives it), becomes that producer: one kernel and one intermediate fewer, and the
// product's elementwise consumer (an SGD update) can then be its epilogue.
#pragma once
#include "graph/graph.hpp"

namespace nxv {

// `graph` with every such pair folded; value ids change, inputs and outputs stay in order.
Graph fold_permutations(Device& device, const Graph& graph);

}  // namespace nxv
