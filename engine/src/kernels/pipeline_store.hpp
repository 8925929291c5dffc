// The device's VkPipelineCache, persisted in the cache directory. Pipelines created through it
// are saved in the background once creation has been quiet for a moment (a batch of new
// kernels is written once), and again when the store is destroyed. A save merges what the file
// already holds, so two processes sharing the directory add to each other's entries instead of
// overwriting them; the file is replaced atomically, never seen half-written.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/vk.hpp"
#include "device/device_core.hpp"

namespace nxv {

struct PipelineStoreStats {
  uint64_t loaded_bytes = 0;  // pipeline data read from disk when the store opened
  uint64_t cache_hits = 0;    // pipelines the driver reports it created from the cache
  uint64_t saves = 0;         // files written by this store
};

class PipelineStore {
 public:
  explicit PipelineStore(std::shared_ptr<DeviceCore> core);
  ~PipelineStore();  // stops the saver, then saves what is new
  PipelineStore(const PipelineStore&) = delete;
  PipelineStore& operator=(const PipelineStore&) = delete;

  // Creates a compute pipeline through the cache (vkCreateComputePipelines is internally
  // synchronised on it) and schedules a save.
  vk::raii::Pipeline create(const vk::ComputePipelineCreateInfo& info);
  // Writes the cache now if pipelines were created since the last save.
  void save();
  PipelineStoreStats stats() const;

 private:
  void saver_loop(std::stop_token stop);

  std::shared_ptr<DeviceCore> core_;
  std::optional<vk::raii::PipelineCache> cache_;
  // Fixed when the store opens: the environment may name another directory later (a test,
  // another device), and this device's pipelines belong in the file it loaded.
  std::optional<std::filesystem::path> path_;
  std::atomic<uint64_t> created_{0}, loaded_bytes_{0}, cache_hits_{0}, saves_{0};
  std::mutex save_mutex_;
  uint64_t saved_created_ = 0;  // created_ at the last save (under save_mutex_)
  std::mutex wake_mutex_;
  std::condition_variable_any wake_;
  std::chrono::steady_clock::time_point last_created_{};
  std::jthread saver_;  // last member: stopped and joined before the others go
};

}  // namespace nxv
