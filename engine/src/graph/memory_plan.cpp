#include "graph/memory_plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "graph/level_schedule.hpp"

namespace nxv {

MemoryPlan plan_memory(const Executable& exec, const std::vector<uint64_t>& slot_bytes, const std::vector<bool>& planned) {
  MemoryPlan plan;
  plan.shared_of_slot.assign(slot_bytes.size(), -1);
  std::vector<size_t> level = launch_levels(exec);
  if (level.empty()) return plan;
  // Each planned slot's first and last level.
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  std::vector<size_t> first(slot_bytes.size(), kNone), last(slot_bytes.size(), 0);
  const auto& launches = exec.launches();
  for (size_t i = 0; i < launches.size(); ++i)
    for (const auto& [slot, access] : launches[i].uses) {
      first[slot] = std::min(first[slot], level[i]);
      last[slot] = std::max(last[slot], level[i]);
    }
  std::vector<uint32_t> order;
  for (uint32_t s = 0; s < slot_bytes.size(); ++s)
    if (planned[s] && first[s] != kNone) order.push_back(s);
  // By first level, the larger first among equals (they take the buffers others then fit in).
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return first[a] != first[b] ? first[a] < first[b] : slot_bytes[a] > slot_bytes[b];
  });
  std::vector<size_t> free_after;  // per shared buffer: the last level of the value it holds
  for (uint32_t s : order) {
    // The smallest free buffer that holds the value; else the largest free one, grown (never
    // more bytes in all than a buffer of its own).
    int32_t fit = -1, largest = -1;
    for (size_t k = 0; k < free_after.size(); ++k) {
      if (free_after[k] >= first[s]) continue;
      if (plan.shared_bytes[k] >= slot_bytes[s] && (fit < 0 || plan.shared_bytes[k] < plan.shared_bytes[size_t(fit)]))
        fit = int32_t(k);
      if (largest < 0 || plan.shared_bytes[k] > plan.shared_bytes[size_t(largest)]) largest = int32_t(k);
    }
    int32_t k = fit >= 0 ? fit : largest;
    if (k < 0) {
      k = int32_t(free_after.size());
      free_after.push_back(0);
      plan.shared_bytes.push_back(0);
    }
    plan.shared_bytes[size_t(k)] = std::max(plan.shared_bytes[size_t(k)], slot_bytes[s]);
    free_after[size_t(k)] = last[s];
    plan.shared_of_slot[s] = k;
  }
  return plan;
}

}  // namespace nxv
