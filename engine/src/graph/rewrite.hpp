// What the fusion passes share: who reads each value, and the graph rebuilt with some nodes
// replaced by fused ones and their producers left out.
#pragma once
#include <functional>
#include <optional>
#include <vector>

#include "graph/graph.hpp"

namespace nxv {

constexpr uint32_t kNoReader = UINT32_MAX;
constexpr uint32_t kManyReaders = UINT32_MAX - 1;  // several nodes, or a graph output

// For each value id: the one node (index into graph.nodes()) that reads it, kNoReader or
// kManyReaders.
std::vector<uint32_t> sole_readers(const Graph& graph);

// A node's replacement: another op over other values (of the graph being rewritten).
struct FusedNode {
  OpId op;
  std::vector<uint32_t> inputs;
  Attrs attrs;
};

// Whether `node` (over values of `graph`, read as row-major tensors) passes its family's check
// for `out`: a pass fuses only what the engine then runs.
bool checks(Device& device, const Graph& graph, const FusedNode& node, const OutSpec& out);

// `graph` with node n replaced by fused[n] where set, and left out where dropped[n] (a
// producer whose only reader took its work); value ids change, inputs and outputs stay.
Graph rewritten(const Graph& graph, const std::vector<std::optional<FusedNode>>& fused, const std::vector<bool>& dropped);

// What the pair passes share (chains, epilogues, permutations): rounds, until one fuses
// nothing, in which each producer p (a node index) whose result one node c alone reads, neither
// taken yet this round, is offered with c to `fuse`; a replacement it returns for c that passes
// its family's check replaces c, and p is dropped.
Graph fuse_sole_reader_pairs(Device& device, const Graph& graph,
                             const std::function<std::optional<FusedNode>(const Graph&, uint32_t p, uint32_t c)>& fuse);

// Applies `round` until a round leaves as many nodes as it found.
Graph until_no_fewer_nodes(const Graph& graph, const std::function<Graph(const Graph&)>& round);

}  // namespace nxv
