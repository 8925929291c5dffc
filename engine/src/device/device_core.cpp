#include "device/device_core.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/errors.hpp"

namespace nxv {
namespace {

uint64_t env_u64(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 0) : 0;
}

uint32_t find_compute_family(const vk::raii::PhysicalDevice& physical) {
  auto families = physical.getQueueFamilyProperties();
  // A compute queue without graphics first (async compute), then any compute queue.
  for (uint32_t i = 0; i < families.size(); ++i)
    if ((families[i].queueFlags & vk::QueueFlagBits::eCompute) &&
        !(families[i].queueFlags & vk::QueueFlagBits::eGraphics))
      return i;
  for (uint32_t i = 0; i < families.size(); ++i)
    if (families[i].queueFlags & vk::QueueFlagBits::eCompute) return i;
  throw Error(ErrorKind::Unsupported, "the device has no compute queue");
}

}  // namespace

DeviceCore::DeviceCore(std::shared_ptr<Instance> instance, vk::raii::PhysicalDevice physical,
                       DeviceInfo info, uint32_t disabled, uint64_t heap_limit,
                       uint64_t max_chunk_bytes)
    : instance_(std::move(instance)), physical_(std::move(physical)), info_(std::move(info)),
      disabled_(disabled) {
  const auto avail = info_.features;
  if (!avail.buffer_device_address || !avail.timeline_semaphore)
    throw Error(ErrorKind::Unsupported,
                "device '" + info_.name +
                    "' lacks bufferDeviceAddress or timelineSemaphore (Vulkan 1.3 is required)");

  // Masked features are neither reported nor enabled, so shaders that need them fail loudly.
  auto& ft = info_.features;
  if (disabled_ & kCapFloat64) ft.float64 = false;
  if (disabled_ & kCapInt64) ft.int64 = false;
  if (disabled_ & kCapFloat16) ft.float16 = false;
  if (disabled_ & kCapBFloat16) ft.bfloat16 = false;
  if (disabled_ & kCapCooperativeMatrix) {
    ft.cooperative_matrix = false;
    info_.cooperative_matrix_shapes.clear();
  }
  if (disabled_ & kCapSubgroupOps) {
    ft.subgroup_basic = ft.subgroup_arithmetic = ft.subgroup_shuffle = false;
  }

  queue_family_ = find_compute_family(physical_);
  float priority = 1.0f;
  vk::DeviceQueueCreateInfo queue_info{
      .queueFamilyIndex = queue_family_, .queueCount = 1, .pQueuePriorities = &priority};

  vk::StructureChain<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan11Features,
                     vk::PhysicalDeviceVulkan12Features, vk::PhysicalDeviceVulkan13Features>
      chain;
  auto& f = chain.get<vk::PhysicalDeviceFeatures2>().features;
  f.shaderFloat64 = ft.float64;
  f.shaderInt64 = ft.int64;
  f.shaderInt16 = ft.int16;
  auto& f11 = chain.get<vk::PhysicalDeviceVulkan11Features>();
  f11.storageBuffer16BitAccess = ft.storage16;
  auto& f12 = chain.get<vk::PhysicalDeviceVulkan12Features>();
  f12.shaderFloat16 = ft.float16;
  f12.shaderInt8 = ft.int8;
  f12.storageBuffer8BitAccess = ft.storage8;
  f12.bufferDeviceAddress = true;
  f12.timelineSemaphore = true;
  f12.scalarBlockLayout = true;
  f12.vulkanMemoryModel = true;
  f12.vulkanMemoryModelDeviceScope = true;
  auto& f13 = chain.get<vk::PhysicalDeviceVulkan13Features>();
  f13.synchronization2 = true;
  f13.maintenance4 = true;
  f13.subgroupSizeControl = true;
  f13.computeFullSubgroups = true;

  // Keep only the features the device really has (some drivers lack memory-model device scope).
  auto have = physical_.getFeatures2<vk::PhysicalDeviceFeatures2, vk::PhysicalDeviceVulkan11Features,
                                     vk::PhysicalDeviceVulkan12Features,
                                     vk::PhysicalDeviceVulkan13Features>();
  const auto& h12 = have.get<vk::PhysicalDeviceVulkan12Features>();
  const auto& h13 = have.get<vk::PhysicalDeviceVulkan13Features>();
  f12.scalarBlockLayout = h12.scalarBlockLayout;
  f12.vulkanMemoryModel = h12.vulkanMemoryModel;
  f12.vulkanMemoryModelDeviceScope = h12.vulkanMemoryModelDeviceScope;
  if (!h13.synchronization2)
    throw Error(ErrorKind::Unsupported, "device '" + info_.name + "' lacks synchronization2");
  f13.maintenance4 = h13.maintenance4;
  f13.subgroupSizeControl = h13.subgroupSizeControl;
  f13.computeFullSubgroups = h13.computeFullSubgroups;

  std::vector<const char*> extensions;
  vk::DeviceCreateInfo device_info{.pNext = &chain.get<vk::PhysicalDeviceFeatures2>(),
                                   .queueCreateInfoCount = 1,
                                   .pQueueCreateInfos = &queue_info,
                                   .enabledExtensionCount = 0,
                                   .ppEnabledExtensionNames = nullptr};
  translate_vk("creating the logical device", [&] { device_.emplace(physical_, device_info); });
  queue_ = static_cast<vk::Queue>(*device_->getQueue(queue_family_, 0));

  auto props2 = physical_.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceVulkan12Properties>();
  const auto& props = props2.get<vk::PhysicalDeviceProperties2>().properties;
  std::memcpy(pipeline_cache_uuid_.data(), props.pipelineCacheUUID.data(), VK_UUID_SIZE);
  const auto& p12 = props2.get<vk::PhysicalDeviceVulkan12Properties>();
  float_controls_ = {bool(p12.shaderDenormPreserveFloat32), bool(p12.shaderDenormPreserveFloat64),
                     bool(p12.shaderSignedZeroInfNanPreserveFloat32), bool(p12.shaderSignedZeroInfNanPreserveFloat64)};

  // Largest power of two a single buffer may be, below the device's allocation/buffer limits.
  uint64_t limit = std::min<uint64_t>(info_.max_allocation_size ? info_.max_allocation_size : (1ull << 31),
                                      info_.max_buffer_size ? info_.max_buffer_size : (1ull << 31));
  if (max_chunk_bytes == 0) max_chunk_bytes = env_u64("NX_VULKAN_MAX_CHUNK_BYTES");
  if (max_chunk_bytes) limit = std::min(limit, max_chunk_bytes);
  limit = std::max<uint64_t>(limit, 1u << 16);
  chunk_bytes_ = std::bit_floor(limit);

  if (heap_limit == 0) heap_limit = env_u64("NX_VULKAN_HEAP_LIMIT");
  std::vector<VkDeviceSize> heap_limits(VK_MAX_MEMORY_HEAPS, VK_WHOLE_SIZE);
  if (heap_limit)
    for (size_t i = 0; i < info_.heaps.size(); ++i)
      if (info_.heaps[i].device_local) heap_limits[i] = heap_limit;

  VmaVulkanFunctions functions{};
  functions.vkGetInstanceProcAddr = instance_->context().getDispatcher()->vkGetInstanceProcAddr;
  functions.vkGetDeviceProcAddr = device_->getDispatcher()->vkGetDeviceProcAddr;
  VmaAllocatorCreateInfo create{};
  create.flags = VMA_ALLOCATOR_CREATE_BUFFER_DEVICE_ADDRESS_BIT;
  create.physicalDevice = static_cast<VkPhysicalDevice>(*physical_);
  create.device = static_cast<VkDevice>(**device_);
  create.instance = static_cast<VkInstance>(*instance_->instance());
  create.vulkanApiVersion = instance_->api_version();
  create.pVulkanFunctions = &functions;
  create.pHeapSizeLimit = heap_limit ? heap_limits.data() : nullptr;
  check_vk(vmaCreateAllocator(&create, &allocator_), "vmaCreateAllocator");

  // Reuse limit: a quarter of the largest device-local heap, at most 16 GiB (1 GiB on CPU
  // devices, whose "device memory" is the host's); NX_VULKAN_BUFFER_CACHE_BYTES overrides.
  uint64_t largest = 0;
  for (const auto& h : info_.heaps)
    if (h.device_local) largest = std::max(largest, h.size);
  uint64_t cache_limit = std::min<uint64_t>(largest / 4, info_.type == "cpu" ? (1ull << 30) : (16ull << 30));
  if (heap_limit) cache_limit = std::min(cache_limit, heap_limit / 4);
  if (const char* v = std::getenv("NX_VULKAN_BUFFER_CACHE_BYTES"); v && *v) cache_limit = std::strtoull(v, nullptr, 0);
  buffer_cache_ = std::make_unique<BufferCache>(allocator_, cache_limit);
}

DeviceCore::~DeviceCore() {
  if (device_) device_->waitIdle();
  buffer_cache_.reset();
  if (allocator_) vmaDestroyAllocator(allocator_);
}

bool DeviceCore::has(Capability c) const {
  const auto& ft = info_.features;
  switch (c) {
    case kCapFloat64: return ft.float64;
    case kCapInt64: return ft.int64;
    case kCapFloat16: return ft.float16;
    case kCapBFloat16: return ft.bfloat16;
    case kCapCooperativeMatrix: return ft.cooperative_matrix;
    case kCapSubgroupOps: return ft.subgroup_basic;
  }
  return false;
}

void DeviceCore::note_allocated(uint64_t bytes) {
  uint64_t now = bytes_in_use_.fetch_add(bytes) + bytes;
  buffers_.fetch_add(1);
  uint64_t peak = peak_bytes_.load();
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now)) {
  }
}

void DeviceCore::note_freed(uint64_t bytes) {
  bytes_in_use_.fetch_sub(bytes);
  buffers_.fetch_sub(1);
}

MemoryStats DeviceCore::memory_stats() const {
  return {bytes_in_use_.load(), peak_bytes_.load(), buffers_.load(),
          buffer_cache_ ? buffer_cache_->cached_bytes() : 0};
}

void DeviceCore::reset_peak() { peak_bytes_.store(bytes_in_use_.load()); }

}  // namespace nxv
