#include "graph/fold.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "graph/rewrite.hpp"
#include "ops/family.hpp"

namespace nxv {

Graph without_duplicates(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  std::map<std::tuple<OpId, DType, Shape, std::vector<uint32_t>>, uint32_t> seen;
  Graph out;
  std::vector<uint32_t> id(graph.value_count());
  for (uint32_t v = 0; v < first_node; ++v) id[v] = out.input(graph.value(v).type, graph.value(v).shape);
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const GraphNode& node = nodes[n];
    std::vector<uint32_t> inputs;
    for (uint32_t v : node.inputs) inputs.push_back(id[v]);
    if (node.attrs.empty()) {
      auto key = std::make_tuple(node.op, node.out.type, node.out.shape, inputs);
      if (auto it = seen.find(key); it != seen.end()) {
        id[first_node + n] = it->second;
        continue;
      }
      id[first_node + n] = out.add(node.op, node.out, std::move(inputs), node.attrs);
      seen.emplace(std::move(key), id[first_node + n]);
      continue;
    }
    id[first_node + n] = out.add(node.op, node.out, std::move(inputs), node.attrs);
  }
  for (uint32_t v : graph.outputs()) out.output(id[v]);
  return out;
}

Graph without_dead_nodes(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  std::vector<bool> live(graph.value_count(), false);
  for (uint32_t v : graph.outputs()) live[v] = true;
  for (size_t n = nodes.size(); n-- > 0;)
    if (live[first_node + n])
      for (uint32_t v : nodes[n].inputs) live[v] = true;
  std::vector<std::optional<FusedNode>> none(nodes.size());
  std::vector<bool> dropped(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) dropped[n] = !live[first_node + n];
  return rewritten(graph, none, dropped);
}

Graph constants_per_reader(const Graph& graph) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  auto tensorless_pointwise = [&](uint32_t v) {
    if (v < first_node) return false;
    const GraphNode& n = nodes[v - first_node];
    return n.inputs.empty() && family_of(n.op).pointwise(n, graph);
  };
  std::vector<uint32_t> reader = sole_readers(graph);
  Graph out;
  std::vector<uint32_t> id(graph.value_count());
  for (uint32_t v = 0; v < first_node; ++v) id[v] = out.input(graph.value(v).type, graph.value(v).shape);
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const GraphNode& node = nodes[n];
    // A reader of constants alone keeps reading the node (a chain reads at least one tensor).
    bool pointwise = family_of(node.op).pointwise(node, graph) &&
                     std::any_of(node.inputs.begin(), node.inputs.end(), [&](uint32_t v) { return !tensorless_pointwise(v); });
    std::vector<uint32_t> inputs;
    for (uint32_t v : node.inputs) {
      if (pointwise && reader[v] == kManyReaders && tensorless_pointwise(v)) {
        const GraphNode& c = nodes[v - first_node];
        inputs.push_back(out.add(c.op, c.out, {}, c.attrs));
      } else {
        inputs.push_back(id[v]);
      }
    }
    id[first_node + n] = out.add(node.op, node.out, std::move(inputs), node.attrs);
  }
  for (uint32_t v : graph.outputs()) out.output(id[v]);
  return out;
}

}  // namespace nxv
