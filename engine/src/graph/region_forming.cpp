// Regions formed over a graph's small nodes (graph/region_forming.hpp).
#include "graph/region_forming.hpp"

#include <algorithm>
#include <functional>
#include <memory>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "device/device_profile.hpp"
#include "ops/family.hpp"
#include "ops/region/region.hpp"

namespace nxv {

namespace {

// Nodes a region holds at most: the generated code, and its compile, grow with them.
constexpr size_t kRegionNodes = 48;
// Graphs of more nodes keep a kernel per node.
constexpr size_t kMaxGraphNodes = 8192;
// compile_graph computes nodes over values known when it compiles up to this size.
constexpr uint64_t kFoldedBytes = 4096;

struct Region {
  std::vector<size_t> members;  // node indices, ascending
  std::vector<uint64_t> bits;   // the same as a set
  FloatControls controls = FloatControls::None;  // its members' together
};

}  // namespace

Graph form_regions(Device& device, const Graph& g, const std::vector<std::pair<uint32_t, size_t>>& donations) {
  const Toggle asked = tuning().program_region;
  // CPU drivers run a workgroup's invocations as one thread's coroutines, switching at every
  // barrier: there the phases cost more than the launches they save (Eight Schools on lavapipe:
  // 369 us in one launch against 134 in twelve).
  if (asked == Toggle::Off || (asked == Toggle::Auto && cpu_paths(device.impl().core->profile()))) return g;
  const size_t inputs = g.input_count(), n = g.nodes().size(), words = (n + 63) / 64;
  // The ancestor sets take n^2 bits: 8 MiB at this many nodes.
  if (n > kMaxGraphNodes) return g;
  std::vector<bool> output(g.value_count(), false), fixed(g.value_count(), false), donated(g.value_count(), false);
  for (uint32_t v : g.outputs()) output[v] = true;
  for (const auto& [input, out] : donations) donated[g.outputs()[out]] = true;
  // Ancestors of each node (as node indices), and who reads each value.
  std::vector<uint64_t> ancestors(n * words, 0);
  std::vector<std::vector<size_t>> readers(g.value_count());
  auto producer = [&](uint32_t v) { return v < inputs ? SIZE_MAX : size_t(v - inputs); };
  for (size_t i = 0; i < n; ++i) {
    const GraphNode& node = g.nodes()[i];
    const uint32_t v = uint32_t(inputs + i);
    bool known = true;
    for (uint32_t x : node.inputs) {
      readers[x].push_back(i);
      known = known && fixed[x];
      size_t m = producer(x);
      if (m == SIZE_MAX) continue;
      for (size_t w = 0; w < words; ++w) ancestors[i * words + w] |= ancestors[m * words + w];
      ancestors[i * words + m / 64] |= uint64_t(1) << (m % 64);
    }
    bool small = node.inputs.empty() || uint64_t(shape_size(node.out.shape)) * dtype_size(node.out.type) <= kFoldedBytes;
    fixed[v] = known && small && !output[v];
  }
  // Each node joins the region of its latest producer in one, else the latest region, where
  // that keeps the region convex: no producer outside it descends from it.
  std::vector<Region> regions;
  std::vector<int64_t> region_of(n, -1);
  auto convex_with = [&](size_t i, size_t r) {
    for (uint32_t x : g.nodes()[i].inputs) {
      size_t m = producer(x);
      if (m == SIZE_MAX || region_of[m] == int64_t(r)) continue;
      for (size_t w = 0; w < words; ++w)
        if (ancestors[m * words + w] & regions[r].bits[w]) return false;
    }
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    const GraphNode& node = g.nodes()[i];
    const uint32_t v = uint32_t(inputs + i);
    if (fixed[v] || donated[v] || !region_computes(device, node, g)) continue;
    const FloatControls controls = region_float_controls(device, node, g);
    if (controls == FloatControls::Both) continue;
    // Elementwise work after a product, conv or reduction that no region takes stays its
    // epilogue (fused where that kernel stores, graph/epilogue_fusion.hpp).
    bool epilogue = family_of(node.op).pointwise(node, g) && std::any_of(node.inputs.begin(), node.inputs.end(), [&](uint32_t x) {
      size_t m = producer(x);
      return m != SIZE_MAX && region_of[m] < 0 && family_of(g.nodes()[m].op).takes_epilogue(g.nodes()[m]);
    });
    if (epilogue) continue;
    std::vector<size_t> candidates;
    for (uint32_t x : node.inputs) {
      size_t m = producer(x);
      if (m != SIZE_MAX && region_of[m] >= 0) candidates.push_back(size_t(region_of[m]));
    }
    std::sort(candidates.rbegin(), candidates.rend());
    if (!regions.empty()) candidates.push_back(regions.size() - 1);
    int64_t joined = -1;
    for (size_t r : candidates)
      if (regions[r].members.size() < kRegionNodes && (regions[r].controls | controls) != FloatControls::Both &&
          convex_with(i, r)) {
        joined = int64_t(r);
        break;
      }
    if (joined < 0) {
      regions.push_back({{}, std::vector<uint64_t>(words, 0)});
      joined = int64_t(regions.size() - 1);
    }
    Region& r = regions[size_t(joined)];
    r.members.push_back(i);
    r.bits[i / 64] |= uint64_t(1) << (i % 64);
    r.controls = r.controls | controls;
    region_of[i] = joined;
  }

  // Each region worth a launch of its own as a subgraph: its inputs (values it reads that it
  // does not compute), its nodes, its outputs (values read outside it or by the graph).
  struct Formed {
    std::shared_ptr<Graph> body;
    std::vector<uint32_t> reads, writes;
    std::vector<uint64_t> offsets;
    uint64_t bytes = 0;
  };
  std::vector<std::optional<Formed>> formed;
  for (size_t r = 0; r < regions.size(); ++r) {
    const std::vector<size_t> members = regions[r].members;
    size_t launching = std::count_if(members.begin(), members.end(), [&](size_t i) { return !region_view(g.nodes()[i], g); });
    auto drop = [&] {
      for (size_t i : members) region_of[i] = -1;
    };
    if (launching < 2) {
      drop();
      continue;
    }
    Formed f;
    f.body = std::make_shared<Graph>();
    std::vector<uint32_t> at(g.value_count(), UINT32_MAX);
    for (size_t i : members)
      for (uint32_t x : g.nodes()[i].inputs) {
        size_t m = producer(x);
        if ((m != SIZE_MAX && region_of[m] == int64_t(r)) || at[x] != UINT32_MAX) continue;
        at[x] = f.body->input(g.value(x).type, g.value(x).shape);
        f.reads.push_back(x);
      }
    for (size_t i : members) {
      const GraphNode& node = g.nodes()[i];
      std::vector<uint32_t> ins;
      for (uint32_t x : node.inputs) ins.push_back(at[x]);
      at[inputs + i] = f.body->add(node.op, node.out, ins, node.attrs);
    }
    for (size_t i : members) {
      const uint32_t v = uint32_t(inputs + i);
      bool outside = output[v] || std::any_of(readers[v].begin(), readers[v].end(), [&](size_t k) { return region_of[k] != int64_t(r); });
      if (!outside) continue;
      f.body->output(at[v]);
      f.writes.push_back(v);
      f.bytes = (f.bytes + 15) / 16 * 16;
      f.offsets.push_back(f.bytes);
      f.bytes += uint64_t(shape_size(g.value(v).shape)) * dtype_size(g.value(v).type);
    }
    if (f.writes.empty()) {
      drop();
      continue;
    }
    if (!region_compiles(device, *f.body)) {
      // Its values may not all fit the workgroup's shared memory at once: its first and second
      // halves (in graph order, so each stays convex and the second only reads the first), each
      // tried again.
      if (members.size() < 4) {
        drop();
        continue;
      }
      const size_t half = members.size() / 2;
      regions.push_back({std::vector<size_t>(members.begin() + std::ptrdiff_t(half), members.end()), {}});
      regions[r].members.resize(half);
      for (size_t i : regions.back().members) region_of[i] = int64_t(regions.size() - 1);
      --r;  // this region again, as its first half
      continue;
    }
    formed.resize(regions.size());
    formed[r] = std::move(f);
  }
  formed.resize(regions.size());
  if (std::none_of(formed.begin(), formed.end(), [](const auto& f) { return f.has_value(); })) return g;

  // The graph again with each region one node (and a view per output), in an order where every
  // node comes after what it reads: a unit (a node, or a region) after its producers' units.
  Graph out;
  std::vector<uint32_t> value(g.value_count(), UINT32_MAX);
  for (uint32_t i = 0; i < inputs; ++i) value[i] = out.input(g.value(i).type, g.value(i).shape);
  std::vector<bool> emitted_node(n, false), emitted_region(regions.size(), false);
  std::function<void(size_t)> emit = [&](size_t i) {
    const int64_t r = region_of[i];
    if (r < 0 ? emitted_node[i] : emitted_region[size_t(r)]) return;
    if (r < 0) {
      emitted_node[i] = true;
      const GraphNode& node = g.nodes()[i];
      std::vector<uint32_t> ins;
      for (uint32_t x : node.inputs) {
        if (producer(x) != SIZE_MAX) emit(producer(x));
        ins.push_back(value[x]);
      }
      value[inputs + i] = out.add(node.op, node.out, ins, node.attrs);
      return;
    }
    emitted_region[size_t(r)] = true;
    const Formed& f = *formed[size_t(r)];
    std::vector<uint32_t> ins;
    for (uint32_t x : f.reads) {
      if (producer(x) != SIZE_MAX) emit(producer(x));
      ins.push_back(value[x]);
    }
    uint32_t packed = out.add(OpId::region, {DType::U8, {int64_t(std::max<uint64_t>(f.bytes, 16))}}, ins,
                              Attrs::of(RegionAttrs{f.body, f.offsets}));
    for (size_t j = 0; j < f.writes.size(); ++j) {
      const OutSpec& s = g.value(f.writes[j]);
      value[f.writes[j]] = out.add(OpId::region_output, s, {packed}, Attrs::of(RegionOutputAttrs{f.offsets[j]}));
    }
  };
  for (size_t i = 0; i < n; ++i) emit(i);
  for (uint32_t v : g.outputs()) out.output(value[v]);
  for (const auto& [input, o] : g.donations()) out.donate(input, o);
  return out;
}

}  // namespace nxv
