#include "graph/level_schedule.hpp"

#include <algorithm>
#include <numeric>

namespace nxv {

std::vector<size_t> launch_levels(const Executable& exec) {
  const auto& launches = exec.launches();
  if (exec.has_host_steps()) return {};
  // Per slot: the level after its last writer, and whether it was written disjointly.
  struct SlotState {
    size_t after_write = 0;
    bool disjoint = false;
    bool read = false;
  };
  std::vector<SlotState> slots(exec.slot_count());
  std::vector<size_t> level(launches.size(), 0);
  for (size_t i = 0; i < launches.size(); ++i) {
    size_t l = 0;
    for (const auto& [slot, access] : launches[i].uses) {
      const SlotState& s = slots.at(slot);
      bool writes = access != Access::Read;
      if (writes && s.read) return {};  // a write after a read: keep the order
      if (writes && access == Access::WriteDisjoint && s.disjoint) continue;
      l = std::max(l, s.after_write);
    }
    level[i] = l;
    for (const auto& [slot, access] : launches[i].uses) {
      SlotState& s = slots[slot];
      if (access == Access::Read) {
        s.read = true;
      } else {
        s.after_write = std::max(s.after_write, l + 1);
        s.disjoint = access == Access::WriteDisjoint;
      }
    }
  }
  return level;
}

void schedule_by_level(Executable& exec) {
  if (exec.launches().size() < 3) return;
  std::vector<size_t> level = launch_levels(exec);
  if (level.empty()) return;
  std::vector<size_t> order(level.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return level[a] < level[b]; });
  exec.reorder(order);
}

}  // namespace nxv
