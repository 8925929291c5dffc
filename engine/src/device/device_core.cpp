#include "device/device_core.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/errors.hpp"
#include "common/settings.hpp"
#include "device/device_info.hpp"

namespace nxv {
namespace {

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
      profile_(DeviceProfile::of(info_, *settings())), disabled_(disabled),
      submit_exclusion_(profile_.submit_exclusion) {
  auto s = settings();
  const auto avail = info_.features;
  if (!avail.buffer_device_address || !avail.timeline_semaphore)
    throw Error(ErrorKind::Unsupported,
                "device '" + info_.name +
                    "' lacks bufferDeviceAddress or timelineSemaphore (Vulkan 1.3 is required)");

  // Masked features are neither reported nor enabled, so shaders that need them fail loudly.
  auto& ft = info_.features;
  if (disabled_ & kCapCooperativeMatrix) disabled_ |= kCapCooperativeMatrix2;  // it builds on coopmat
  if (disabled_ & kCapFloat64) ft.float64 = false;
  if (disabled_ & kCapInt64) ft.int64 = false;
  if (disabled_ & kCapFloat16) ft.float16 = false;
  if (disabled_ & kCapBFloat16) ft.bfloat16 = ft.bfloat16_cooperative_matrix = false;
  if (disabled_ & kCapCooperativeMatrix) ft.cooperative_matrix = ft.bfloat16_cooperative_matrix = false;
  if (disabled_ & kCapCooperativeMatrix2) ft.cooperative_matrix2 = false;
  if (disabled_ & kCapSubgroupOps) {
    ft.subgroup_basic = ft.subgroup_arithmetic = ft.subgroup_shuffle = ft.subgroup_ballot = false;
  }
  if (disabled_ & kCapSubgroupSizeControl) ft.subgroup_size_control = ft.compute_full_subgroups = false;
  if (disabled_ & kCapConditionalRendering) ft.conditional_rendering = false;

  queue_family_ = find_compute_family(physical_);
  float priority = 1.0f;
  vk::DeviceQueueCreateInfo queue_info{
      .queueFamilyIndex = queue_family_, .queueCount = 1, .pQueuePriorities = &priority};

  // What the device supports, then what we enable: an extension joins (its name and its
  // feature structure) only when the device lists it and no mask turned it off.
  const OptionalExtensions listed = listed_extensions(physical_);
  FeatureChain have(listed);
  query_features(physical_, have);
  OptionalExtensions on;
  on.cooperative_matrix = listed.cooperative_matrix && ft.cooperative_matrix;
  on.bfloat16 = listed.bfloat16 && ft.bfloat16;
  on.cooperative_matrix2 = listed.cooperative_matrix2 && on.cooperative_matrix && ft.cooperative_matrix2;
  on.conditional_rendering = listed.conditional_rendering && ft.conditional_rendering;
  FeatureChain want(on);

  auto& f = want.f2.features;
  f.shaderFloat64 = ft.float64;
  f.shaderInt64 = ft.int64;
  f.shaderInt16 = ft.int16;
  auto& f11 = want.f11;
  f11.storageBuffer16BitAccess = ft.storage16;
  auto& f12 = want.f12;
  f12.shaderFloat16 = ft.float16;
  f12.shaderInt8 = ft.int8;
  f12.storageBuffer8BitAccess = ft.storage8;
  f12.bufferDeviceAddress = true;
  f12.timelineSemaphore = true;
  // Keep only the features the device really has (some drivers lack memory-model device scope).
  f12.scalarBlockLayout = have.f12.scalarBlockLayout;
  f12.vulkanMemoryModel = have.f12.vulkanMemoryModel;
  f12.vulkanMemoryModelDeviceScope = have.f12.vulkanMemoryModelDeviceScope;
  auto& f13 = want.f13;
  if (!have.f13.synchronization2)
    throw Error(ErrorKind::Unsupported, "device '" + info_.name + "' lacks synchronization2");
  f13.synchronization2 = true;
  f13.maintenance4 = have.f13.maintenance4;
  bool size_control = !(disabled_ & kCapSubgroupSizeControl);
  f13.subgroupSizeControl = size_control && have.f13.subgroupSizeControl;
  f13.computeFullSubgroups = size_control && have.f13.computeFullSubgroups;

  if (on.cooperative_matrix) want.coopmat.cooperativeMatrix = true;
  if (on.conditional_rendering) want.conditional.conditionalRendering = true;
  if (on.bfloat16) {
    want.bf16.shaderBFloat16Type = true;
    want.bf16.shaderBFloat16DotProduct = have.bf16.shaderBFloat16DotProduct;
    // bf16 matrices need the cooperative-matrix extension itself.
    want.bf16.shaderBFloat16CooperativeMatrix = on.cooperative_matrix && have.bf16.shaderBFloat16CooperativeMatrix;
  }
#ifdef VK_NV_cooperative_matrix2
  if (on.cooperative_matrix2) {
    void* next = want.coopmat2.pNext;
    want.coopmat2 = have.coopmat2;  // every feature it reports, under our own link
    want.coopmat2.pNext = next;
  }
#endif

  // Report what is enabled, nothing more: has() answers from these.
  ft.cooperative_matrix = on.cooperative_matrix;
  ft.cooperative_matrix2 = on.cooperative_matrix2 && want.any_coopmat2();
  ft.bfloat16 = on.bfloat16;
  ft.conditional_rendering = on.conditional_rendering;
  ft.bfloat16_cooperative_matrix = on.bfloat16 && bool(want.bf16.shaderBFloat16CooperativeMatrix);
  ft.subgroup_size_control = ft.subgroup_size_control && f13.subgroupSizeControl;
  ft.compute_full_subgroups = bool(f13.computeFullSubgroups);
  // Shapes whose types the device cannot use as enabled are not offered.
  auto usable = [&](const std::string& t) {
    if (t == "f32" || t == "s32" || t == "u32") return true;
    if (t == "f16") return ft.float16;
    if (t == "bf16") return ft.bfloat16_cooperative_matrix;
    if (t == "f64") return ft.float64;
    if (t == "s64" || t == "u64") return ft.int64;
    if (t == "s16" || t == "u16") return ft.int16;
    if (t == "s8" || t == "u8") return ft.int8;
    return false;  // types of extensions the engine does not enable (float8, ...)
  };
  auto& shapes = info_.cooperative_matrix_shapes;
  if (!ft.cooperative_matrix) shapes.clear();
  std::erase_if(shapes, [&](const CooperativeMatrixShape& s) {
    return !usable(s.a_type) || !usable(s.b_type) || !usable(s.c_type) || !usable(s.result_type);
  });
  auto& c2 = info_.cooperative_matrix2;
  if (!ft.cooperative_matrix2) c2 = {};
  std::erase_if(c2.flexible_shapes, [&](const FlexibleMatrixShape& s) {
    return !usable(s.a_type) || !usable(s.b_type) || !usable(s.c_type) || !usable(s.result_type);
  });

  auto extensions = extension_names(on);
  for (const char* e : extensions) enabled_extensions_.emplace_back(e);
  vk::DeviceCreateInfo device_info{.pNext = &want.f2,
                                   .queueCreateInfoCount = 1,
                                   .pQueueCreateInfos = &queue_info,
                                   .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
                                   .ppEnabledExtensionNames = extensions.data()};
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
  if (max_chunk_bytes == 0) max_chunk_bytes = s->max_chunk_bytes;
  if (max_chunk_bytes) limit = std::min(limit, max_chunk_bytes);
  limit = std::max<uint64_t>(limit, 1u << 16);
  chunk_bytes_ = std::bit_floor(limit);

  if (heap_limit == 0) heap_limit = s->heap_limit;
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
  uint64_t cache_limit = std::min<uint64_t>(largest / 4, profile_.cpu_driver ? (1ull << 30) : (16ull << 30));
  if (heap_limit) cache_limit = std::min(cache_limit, heap_limit / 4);
  if (s->buffer_cache_bytes) cache_limit = *s->buffer_cache_bytes;
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
    case kCapCooperativeMatrix2: return ft.cooperative_matrix2;
    case kCapSubgroupSizeControl: return ft.subgroup_size_control;
    case kCapConditionalRendering: return ft.conditional_rendering;
  }
  return false;
}

void DeviceCore::check_not_lost() const {
  if (lost())
    throw Error(ErrorKind::DeviceLost, "the Vulkan device '" + info_.name +
                                           "' was lost (VK_ERROR_DEVICE_LOST): its tensors are gone; open the "
                                           "device again (Nx.Vulkan.reopen_device/1) and recompute them");
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
  return {bytes_in_use_.load(), peak_bytes_.load(), buffers_.load(), buffer_cache_ ? buffer_cache_->cached_bytes() : 0,
          memory_limit_.load()};
}

void DeviceCore::check_memory_limit(uint64_t bytes) const {
  uint64_t limit = memory_limit_.load(), in_use = bytes_in_use_.load();
  if (limit && in_use + bytes > limit)
    throw Error(ErrorKind::OutOfMemory, "allocating " + std::to_string(bytes) + " bytes would pass the memory limit of " +
                                            std::to_string(limit) + " bytes (Nx.Vulkan.set_memory_limit/2): " +
                                            std::to_string(in_use) + " bytes in use");
}

void DeviceCore::reset_peak() { peak_bytes_.store(bytes_in_use_.load()); }

}  // namespace nxv
