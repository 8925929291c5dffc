// Graph folding that fusion builds on: repeated nodes merged, dead nodes dropped (a fusion pass leaves a producer whose
// readers all took its work; grad leaves values nothing reads), and nodes that read no tensor
// and are pointwise (constants: Family::pointwise) copied once per pointwise reader, so that
// each reader's chain holds the value itself instead of a kernel filling a buffer per run.
#pragma once
#include "graph/graph.hpp"

namespace nxv {

// `graph` with each node that repeats an earlier one (the same op, type, shape and inputs, and
// no attributes: grad emits such twins) replaced by the earlier one's value.
Graph without_duplicates(const Graph& graph);

// `graph` without the nodes that no output depends on.
Graph without_dead_nodes(const Graph& graph);

// `graph` with each tensorless pointwise node that several nodes read given to each pointwise
// reader that also reads a tensor, as a copy of its own (the original stays for other readers
// and outputs).
Graph constants_per_reader(const Graph& graph);

}  // namespace nxv
