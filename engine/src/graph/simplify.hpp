// Simplification: nodes that their family computes with cheaper nodes of the same bits
// (Family::append_simplified) replaced by those, before the other passes see the graph.
#pragma once
#include "graph/graph.hpp"

namespace nxv {

Graph simplified(const Graph& graph, const Device& device);

}  // namespace nxv
