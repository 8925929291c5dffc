// Splitting elementwise-shaped work into launches, for every family and for memory copies:
// dense ranges that stay inside one buffer chunk (tensors over 4 GiB span several), and
// strided views collapsed to at most a kernel's number of axes.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "device/device_core.hpp"
#include "exec/launch.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

inline constexpr int kMaxPlanRank = 6;
inline constexpr uint64_t kMaxDispatchElements = 1ull << 30;

// How the work will run: dense (every input is the output's shape and contiguous, or a single
// element) or strided.
bool all_dense(const std::vector<Tensor>& views);

// One launch's share of the work, before a kernel packs it into its push constants.
struct PlannedRange {
  BufferRef out;
  BufferRef in[3];
  uint32_t n = 0, rank = 0, start = 0, dense = 0;
  uint32_t shape[kMaxPlanRank] = {};
  uint32_t stride[3][kMaxPlanRank] = {};  // in elements, per input
};

// Calls `emit` for each launch of `out` (contiguous, bound to `out_slot`) with inputs `views`
// (broadcast to out's shape, bound to `in_slots`), at most `max_rank` collapsed axes per launch.
// Throws Unsupported when a strided view cannot be addressed with 32-bit element offsets
// inside one chunk.
void plan_linear(const Tensor& out, uint32_t out_slot, const std::vector<Tensor>& views,
                 const std::vector<uint32_t>& in_slots, bool dense, size_t max_rank,
                 const std::function<void(const PlannedRange&)>& emit);

// Number of workgroups for `n` elements with grid-stride loops, at most `max_workgroups` when
// that is not 0 (a kernel's own cap, Kernel::max_workgroups).
uint32_t workgroups_for(const DeviceCore& core, uint64_t n, uint32_t workgroup_size, uint32_t max_workgroups = 0);

// The workgroup size for a launch of at most `invocations` whose kernel runs at any size (no
// shared memory, grid-stride loops): `preferred`, except on CPU drivers where the launch fits a
// small group. llvmpipe runs a workgroup as a loop over its invocations, a pass per vector of
// lanes, and a pass with no lane active costs about as much as a tiny op's whole work.
uint32_t linear_workgroup_size(const DeviceCore& core, uint64_t invocations, uint32_t preferred);
inline constexpr uint32_t kSmallWorkgroup = 16;

// Whether strided (not dense) launches on `core` take runs of consecutive elements per
// invocation, their coordinates divided out once per run and then stepped: on CPU drivers,
// where each division costs tens of cycles per lane (GPUs keep consecutive elements in
// consecutive invocations, for coalesced access). Tuning's gpu_paths gives
// CPU devices the GPU's loops. The elementwise kernel and the strided copy follow it.
bool strided_runs(const DeviceCore& core);
inline constexpr uint32_t kStridedRun = 16;

}  // namespace nxv
