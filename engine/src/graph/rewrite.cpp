#include "graph/rewrite.hpp"

namespace nxv {

std::vector<uint32_t> sole_readers(const Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<uint32_t> reader(graph.value_count(), kNoReader);
  for (uint32_t n = 0; n < nodes.size(); ++n)
    for (uint32_t v : nodes[n].inputs) reader[v] = reader[v] == kNoReader || reader[v] == n ? n : kManyReaders;
  for (uint32_t v : graph.outputs()) reader[v] = kManyReaders;
  return reader;
}

bool checks(Device& device, const Graph& graph, const FusedNode& node, const OutSpec& out) {
  std::vector<TensorSpec> specs;
  specs.reserve(node.inputs.size());
  for (uint32_t v : node.inputs) specs.push_back(contiguous_spec(graph.value(v).type, graph.value(v).shape));
  return bool(check_op(device, node.op, out, specs, node.attrs));
}

Graph rewritten(const Graph& graph, const std::vector<std::optional<FusedNode>>& fused, const std::vector<bool>& dropped) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  Graph out;
  std::vector<uint32_t> id(graph.value_count(), kNoReader);
  for (uint32_t v = 0; v < first_node; ++v) id[v] = out.input(graph.value(v).type, graph.value(v).shape);
  auto mapped = [&](const std::vector<uint32_t>& values) {
    std::vector<uint32_t> m;
    m.reserve(values.size());
    for (uint32_t v : values) m.push_back(id[v]);
    return m;
  };
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    if (dropped[n]) continue;
    const GraphNode& node = nodes[n];
    id[first_node + n] = fused[n] ? out.add(fused[n]->op, node.out, mapped(fused[n]->inputs), fused[n]->attrs)
                                  : out.add(node.op, node.out, mapped(node.inputs), node.attrs);
  }
  for (uint32_t v : graph.outputs()) out.output(id[v]);
  return out;
}

Graph fuse_sole_reader_pairs(Device& device, const Graph& graph,
                             const std::function<std::optional<FusedNode>(const Graph&, uint32_t, uint32_t)>& fuse) {
  return until_no_fewer_nodes(graph, [&](const Graph& g) {
    const auto& nodes = g.nodes();
    const uint32_t first_node = uint32_t(g.input_count());
    std::vector<uint32_t> reader = sole_readers(g);
    std::vector<std::optional<FusedNode>> fused(nodes.size());
    std::vector<bool> dropped(nodes.size(), false);
    for (uint32_t p = 0; p < nodes.size(); ++p) {
      uint32_t c = reader[first_node + p];
      if (c >= kManyReaders || fused[p] || dropped[p] || fused[c] || dropped[c]) continue;
      auto node = fuse(g, p, c);
      if (!node || !checks(device, g, *node, nodes[c].out)) continue;
      fused[c] = std::move(node);
      dropped[p] = true;
    }
    return rewritten(g, fused, dropped);
  });
}

Graph until_no_fewer_nodes(const Graph& graph, const std::function<Graph(const Graph&)>& round) {
  Graph g = round(graph);
  for (size_t before = graph.nodes().size(); g.nodes().size() < before;) {
    before = g.nodes().size();
    g = round(g);
  }
  return g;
}

}  // namespace nxv
