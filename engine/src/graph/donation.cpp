#include "graph/donation.hpp"

#include <algorithm>

#include "graph/level_schedule.hpp"
#include "ops/family.hpp"

namespace nxv {

std::vector<std::pair<uint32_t, uint32_t>> in_place_donations(const Graph& given, const Graph& fused,
                                                              const Executable& exec,
                                                              const std::vector<int64_t>& input_slots,
                                                              const std::vector<std::pair<uint32_t, Tensor>>& outputs,
                                                              const std::vector<uint64_t>& slot_bytes) {
  std::vector<std::pair<uint32_t, uint32_t>> in_place;
  if (given.donations().empty()) return in_place;
  std::vector<size_t> level = launch_levels(exec);
  if (level.empty()) return in_place;
  const auto& launches = exec.launches();
  const uint32_t inputs = uint32_t(fused.input_count());
  for (const auto& [input, position] : given.donations()) {
    uint32_t value = fused.outputs().at(position);
    const auto& [slot, view] = outputs.at(position);
    const OutSpec& spec = fused.value(input);
    if (value < inputs || input_slots.at(input) < 0 || !view.buffer) continue;
    // The output is its node's whole buffer, row-major, and no other output's.
    uint64_t bytes = uint64_t(shape_size(spec.shape)) * dtype_size(spec.type);
    if (view.offset != 0 || view.strides != row_major_strides(view.shape) || slot_bytes.at(slot) < bytes) continue;
    if (std::count_if(outputs.begin(), outputs.end(), [&](const auto& o) { return o.first == slot; }) != 1) continue;
    if (std::find(input_slots.begin(), input_slots.end(), int64_t(slot)) != input_slots.end()) continue;
    uint32_t input_slot = uint32_t(input_slots[input]);
    auto uses = [](const Launch& l, uint32_t s, bool write) {
      return std::any_of(l.uses.begin(), l.uses.end(),
                         [&](const auto& u) { return u.first == s && (u.second != Access::Read) == write; });
    };
    size_t first_write = SIZE_MAX;
    for (size_t l = 0; l < launches.size(); ++l)
      if (uses(launches[l], slot, true)) first_write = std::min(first_write, level[l]);
    bool safe = first_write != SIZE_MAX;
    bool writer_reads = false;
    for (size_t l = 0; l < launches.size() && safe; ++l) {
      if (!uses(launches[l], input_slot, false)) continue;
      if (uses(launches[l], slot, true)) writer_reads = true;
      else if (level[l] >= first_write) safe = false;
    }
    if (safe && writer_reads) {
      const GraphNode& node = fused.nodes()[value - inputs];
      const Family& family = family_of(node.op);
      for (size_t k = 0; k < node.inputs.size() && safe; ++k)
        if (node.inputs[k] == input && !family.stores_where_it_reads(node, k, fused)) safe = false;
    }
    if (safe) in_place.emplace_back(input, slot);
  }
  return in_place;
}

}  // namespace nxv
