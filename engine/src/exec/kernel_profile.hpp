// GPU time per kernel from timestamps (NX_VULKAN_PROFILE=1, read when the device opens): each
// batch gets a timestamp query pool; a timestamp is written at its start and after each
// dispatch, and a dispatch is charged the time from the previous timestamp to its own (its
// barrier and launch gap included), so the charges add up to the batch's GPU time. Results
// are read when the batch retires and summed per kernel label until taken.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/vk.hpp"
#include "nxv/device.hpp"

namespace nxv {

class DeviceCore;

class KernelProfiler {
 public:
  // The queries of one batch.
  struct Batch {
    std::optional<vk::raii::QueryPool> pool;
    std::vector<std::string> labels;  // one per dispatch timed
  };

  explicit KernelProfiler(DeviceCore& core);
  bool enabled() const { return enabled_; }
  // At the start of a batch's command buffer: the pool is reset and the first timestamp written.
  void begin(Batch& batch, const vk::raii::CommandBuffer& cmd) const;
  // After a dispatch: its timestamp (dispatches beyond the pool's size go untimed).
  void after_dispatch(Batch& batch, const vk::raii::CommandBuffer& cmd, std::string_view label) const;
  // Once the batch has finished on the GPU: adds its times to the totals.
  void collect(Batch& batch);
  // The totals since the last call, largest first; then starts again from zero.
  std::vector<KernelTime> take();

 private:
  static constexpr uint32_t kQueries = 4096;
  DeviceCore& core_;
  bool enabled_ = false;
  double period_ns_ = 1.0;
  uint64_t valid_mask_ = ~0ull;
  std::mutex mutex_;
  std::map<std::string, KernelTime, std::less<>> totals_;
};

}  // namespace nxv
