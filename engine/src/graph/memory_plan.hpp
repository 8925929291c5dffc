// The memory plan of a compiled graph: intermediates (values no output, input or value
// computed when compiled holds, and the lowerings' own scratch) whose launches lie in levels
// apart share one buffer per run, so that a run holds far fewer bytes than one buffer per
// value. Two values share a buffer only where every launch of the earlier one has a lower
// level than every launch of the later one: in a level-scheduled executable a full barrier
// then separates them (graph/level_schedule.hpp), and the stream's barrier before the later
// value's first write (a write after a write of the same buffer) covers the rest.
#pragma once
#include <cstdint>
#include <vector>

#include "exec/launch.hpp"

namespace nxv {

struct MemoryPlan {
  std::vector<int32_t> shared_of_slot;  // per slot: -1 (a buffer of its own, or none), else its shared buffer
  std::vector<uint64_t> shared_bytes;   // each shared buffer's size (the largest value it holds)
};

// The plan for `exec` (already level-scheduled) with `slot_bytes` per slot, sharing among the
// slots flagged in `planned`. An executable that keeps its order (host steps, a buffer written
// after a read) shares nothing.
MemoryPlan plan_memory(const Executable& exec, const std::vector<uint64_t>& slot_bytes, const std::vector<bool>& planned);

}  // namespace nxv
