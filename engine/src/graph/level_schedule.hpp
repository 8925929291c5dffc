// Level scheduling of a compiled graph's launches: each launch goes to the earliest level after
// every launch whose results it reads or whose buffers it overwrites, and the launches run
// level by level, so that independent ones (a layer's weight gradient and the gradient it
// passes back, a bias gradient) are recorded between the same barriers and overlap on the GPU.
// The stream places a barrier before a launch that reads what the batch wrote since the last
// one (exec/stream.hpp): one per level instead of one per dependent launch.
#pragma once
#include "exec/launch.hpp"

namespace nxv {

// Reorders `exec`'s launches by level (stable within a level). Executables with host steps
// (which wait for the GPU), or where a launch overwrites a buffer an earlier one reads (the
// stream's barriers see only reads after writes), keep their order.
void schedule_by_level(Executable& exec);

// Each launch's level (1 + the highest level of the launches whose results it reads or whose
// buffers it overwrites); empty where the executable keeps its order (as above). In a
// scheduled executable a launch runs after a full barrier that follows every launch of a
// lower level.
std::vector<size_t> launch_levels(const Executable& exec);

}  // namespace nxv
