// Regions: nodes over small values gathered into one `region` node (ops/region/region.hpp),
// one launch of one workgroup where the graph's lowering would launch a kernel per node with a
// barrier between dependent ones. Each region is convex (no path leaves it and comes back), so
// the graph stays acyclic; it holds at most a few dozen nodes, at least two that launch. Not
// on CPU drivers unless the tuning asks (program.region=1), nor anywhere with program.region=0.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "nxv/graph.hpp"

namespace nxv {

class Device;

// `donations`: the program's (Graph::donations of the graph as given, whose outputs `graph`
// keeps in order): their outputs stay out of regions, so that they can be written in place.
Graph form_regions(Device& device, const Graph& graph, const std::vector<std::pair<uint32_t, size_t>>& donations);

}  // namespace nxv
