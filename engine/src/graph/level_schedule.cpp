#include "graph/level_schedule.hpp"

#include <algorithm>
#include <numeric>

namespace nxv {

void schedule_by_level(Executable& exec) {
  const auto& launches = exec.launches();
  if (exec.has_host_steps() || launches.size() < 3) return;
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
      if (writes && s.read) return;  // a write after a read: keep the order
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
  std::vector<size_t> order(launches.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return level[a] < level[b]; });
  exec.reorder(order);
}

}  // namespace nxv
