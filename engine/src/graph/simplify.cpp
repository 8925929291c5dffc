#include "graph/simplify.hpp"

#include "graph/fold.hpp"
#include "ops/family.hpp"

namespace nxv {

Graph simplified(const Graph& graph, const Device& device) {
  const auto& nodes = graph.nodes();
  const uint32_t first_node = uint32_t(graph.input_count());
  Graph out;
  std::vector<uint32_t> id(graph.value_count());
  for (uint32_t v = 0; v < first_node; ++v) id[v] = out.input(graph.value(v).type, graph.value(v).shape);
  std::vector<uint32_t> inputs;
  bool rewrote = false;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const GraphNode& node = nodes[n];
    inputs.clear();
    for (uint32_t v : node.inputs) inputs.push_back(id[v]);
    if (auto result = family_of(node.op).append_simplified(node, graph, inputs, out, device)) {
      id[first_node + n] = *result;
      rewrote = true;
      continue;
    }
    id[first_node + n] = out.add(node.op, node.out, inputs, node.attrs);
  }
  for (uint32_t v : graph.outputs()) out.output(id[v]);
  // What a rewrite left unread goes now: the chain passes would keep a value that two nodes
  // read, the dead one included, out of a chain.
  if (rewrote) out = without_dead_nodes(out);
  for (const auto& [input, output] : graph.donations()) out.donate(input, output);
  return out;
}

}  // namespace nxv
