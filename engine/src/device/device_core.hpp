// What every buffer and kernel of a device needs: the logical device, its queue and the
// memory allocator. Shared by the Device and by every Buffer, so that memory outlives neither.
#pragma once
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vk_mem_alloc.h>

#include "common/vk.hpp"
#include "device/device_profile.hpp"
#include "device/instance.hpp"
#include "device/submit_exclusion.hpp"
#include "memory/buffer_cache.hpp"
#include "nxv/device.hpp"

namespace nxv {

class DeviceCore {
 public:
  DeviceCore(std::shared_ptr<Instance> instance, vk::raii::PhysicalDevice physical, DeviceInfo info,
             uint32_t disabled, uint64_t heap_limit, uint64_t max_chunk_bytes);
  ~DeviceCore();
  DeviceCore(const DeviceCore&) = delete;
  DeviceCore& operator=(const DeviceCore&) = delete;

  // Features as enabled on this logical device (after the mask).
  const DeviceInfo& info() const { return info_; }
  // The policies and quirks decided when the device opened.
  const DeviceProfile& profile() const { return profile_; }
  bool has(Capability c) const;
  // The device extensions enabled on the logical device (VK_KHR_cooperative_matrix, ...).
  const std::vector<std::string>& enabled_extensions() const { return enabled_extensions_; }
  vk::raii::Device& device() { return *device_; }
  const vk::raii::PhysicalDevice& physical() const { return physical_; }
  vk::Queue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VmaAllocator allocator() const { return allocator_; }
  BufferCache& buffer_cache() { return *buffer_cache_; }
  // Largest single VkBuffer the engine makes (a power of two); bigger tensors span several.
  uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::array<uint8_t, VK_UUID_SIZE> pipeline_cache_uuid() const { return pipeline_cache_uuid_; }
  // Shader float controls the device honours (VK 1.2 float-controls properties).
  struct FloatControls {
    bool denorm_preserve32 = false, denorm_preserve64 = false;
    bool signed_zero_inf_nan32 = false, signed_zero_inf_nan64 = false;
  };
  const FloatControls& float_controls() const { return float_controls_; }

  // Set when the driver reports VK_ERROR_DEVICE_LOST: nothing more runs on this logical device,
  // every later use raises DeviceLost, and a new one must be opened.
  void mark_lost() { lost_.store(true, std::memory_order_relaxed); }
  bool lost() const { return lost_.load(std::memory_order_relaxed); }
  // Throws DeviceLost when the device was lost.
  void check_not_lost() const;

  // Memory statistics, updated by Buffer.
  void note_allocated(uint64_t bytes);
  void note_freed(uint64_t bytes);
  MemoryStats memory_stats() const;
  void reset_peak();
  void set_memory_limit(uint64_t bytes) { memory_limit_.store(bytes); }
  // Throws OutOfMemory where `bytes` more would pass the memory limit.
  void check_memory_limit(uint64_t bytes) const;

  // Pipeline creation against queue submission (DeviceProfile::submit_exclusion).
  SubmitExclusion& submit_exclusion() { return submit_exclusion_; }

 private:
  std::shared_ptr<Instance> instance_;
  vk::raii::PhysicalDevice physical_;
  DeviceInfo info_;
  DeviceProfile profile_;
  uint32_t disabled_;
  std::vector<std::string> enabled_extensions_;
  std::optional<vk::raii::Device> device_;
  vk::Queue queue_;
  uint32_t queue_family_ = 0;
  VmaAllocator allocator_ = nullptr;
  std::unique_ptr<BufferCache> buffer_cache_;
  uint64_t chunk_bytes_ = 0;
  std::array<uint8_t, VK_UUID_SIZE> pipeline_cache_uuid_{};
  FloatControls float_controls_;
  std::atomic<uint64_t> bytes_in_use_{0}, peak_bytes_{0}, buffers_{0}, memory_limit_{0};
  std::atomic<bool> lost_{false};
  SubmitExclusion submit_exclusion_;
};

}  // namespace nxv
