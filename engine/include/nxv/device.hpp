// Vulkan devices: enumeration, choice, capability masks, memory statistics.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nxv {

struct MemoryHeap {
  uint64_t size = 0;
  bool device_local = false;
};

struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, result_type;  // e.g. "f16", "f32"
  std::string scope;                                // "subgroup", "workgroup", ...
};

// VK_NV_cooperative_matrix2: a size granularity of workgroup-scope matrices of flexible
// dimensions (m, n, k are multiples of these) for `workgroup_invocations` invocations.
struct FlexibleMatrixShape : CooperativeMatrixShape {
  uint32_t workgroup_invocations = 0;
};

// What VK_NV_cooperative_matrix2 offers (the dot tier's workgroup-scope GEMM reads it).
struct CooperativeMatrix2Info {
  bool workgroup_scope = false, flexible_dimensions = false, tensor_addressing = false;
  uint32_t max_workgroup_size = 0;      // cooperativeMatrixWorkgroupScopeMaxWorkgroupSize
  uint32_t max_dimension = 0;           // cooperativeMatrixFlexibleDimensionsMaxDimension
  uint32_t reserved_shared_memory = 0;  // cooperativeMatrixWorkgroupScopeReservedSharedMemory
  std::vector<FlexibleMatrixShape> flexible_shapes;
};

struct DeviceFeatures {
  bool float16 = false, float64 = false, int64 = false, int16 = false, int8 = false;
  bool storage8 = false, storage16 = false;
  // VK_KHR_shader_bfloat16 shaderBFloat16Type; never set when built with headers before 1.4.311
  bool bfloat16 = false;
  bool bfloat16_cooperative_matrix = false;  // ... shaderBFloat16CooperativeMatrix
  bool cooperative_matrix = false;           // VK_KHR_cooperative_matrix, compute stage
  bool cooperative_matrix2 = false;          // VK_NV_cooperative_matrix2 (any of its features)
  bool subgroup_basic = false, subgroup_arithmetic = false, subgroup_shuffle = false;
  bool subgroup_ballot = false;  // subgroupBallot and its bit counts, compute stage
  // Vulkan 1.3: a pipeline may require a subgroup size in [min, max]_subgroup_size (compute is
  // among requiredSubgroupSizeStages), and may require full subgroups.
  bool subgroup_size_control = false, compute_full_subgroups = false;
  bool buffer_device_address = false, timeline_semaphore = false;
  // VK_EXT_conditional_rendering: dispatches skipped on a device-side flag (Program::run's gate).
  bool conditional_rendering = false;
};

struct DeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string type;  // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendor_id = 0, device_id = 0;
  std::string vendor;  // "nvidia", "amd", "intel", "apple", "mesa", ... or hex id
  std::string driver_name, driver_info;
  std::string api_version;  // "1.4.305"
  std::string uuid;         // device UUID, hex
  std::vector<MemoryHeap> heaps;
  uint32_t subgroup_size = 0;  // the default size
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  uint32_t max_compute_workgroup_subgroups = 0;
  uint32_t required_subgroup_size_stages = 0;  // VkShaderStageFlags (compute: 0x20)
  std::array<uint32_t, 3> max_workgroup_size{};
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_count{};
  uint32_t max_shared_memory = 0;
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_allocation_size = 0;
  uint64_t max_buffer_size = 0;
  uint32_t max_push_constants = 0;
  // list_devices: what the device offers. Device::info(): what the logical device has enabled,
  // after the capability mask.
  DeviceFeatures features;
  // Device::info(): only shapes whose types are enabled (f16 needs float16, bf16 needs
  // bfloat16_cooperative_matrix, ...).
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;
  // Empty unless features.cooperative_matrix2 (Device::info(): with the same type filter).
  CooperativeMatrix2Info cooperative_matrix2;
};

// Features a capability mask can turn off, so that fallback paths run on any machine.
enum Capability : uint32_t {
  kCapFloat64 = 1u << 0,
  kCapInt64 = 1u << 1,
  kCapFloat16 = 1u << 2,
  kCapBFloat16 = 1u << 3,
  kCapCooperativeMatrix = 1u << 4,
  kCapSubgroupOps = 1u << 5,
  kCapCooperativeMatrix2 = 1u << 6,   // also off when kCapCooperativeMatrix is
  kCapSubgroupSizeControl = 1u << 7,  // subgroupSizeControl and computeFullSubgroups
  kCapConditionalRendering = 1u << 8,
};
inline constexpr uint32_t kAllCapabilities = (1u << 9) - 1;
// Parses "f64,int64,f16,bf16,coopmat,coopmat2,subgroup,subgroup_size,conditional_rendering" (also
// accepts "all");
// throws on unknown names.
uint32_t parse_capability_mask(const std::string& text);

struct DeviceOptions {
  // "" chooses by NX_VULKAN_DEVICE, else discrete > integrated > virtual > cpu.
  // A number picks by index, anything else by case-insensitive name substring.
  std::string selector;
  // Capabilities to turn off, in addition to NX_VULKAN_DISABLE.
  uint32_t disabled = 0;
  // Limits each device-local heap (VMA's heap size limit); 0 = NX_VULKAN_HEAP_LIMIT or none.
  uint64_t heap_limit = 0;
  // Caps the size of one VkBuffer (rounded down to a power of two, at least 64 KiB); 0 =
  // NX_VULKAN_MAX_CHUNK_BYTES or the device's limits. Tensors above it span several buffers.
  uint64_t max_chunk_bytes = 0;
};

struct MemoryStats {
  uint64_t bytes_in_use = 0;
  uint64_t peak_bytes = 0;
  uint64_t buffers = 0;
  uint64_t cached_bytes = 0;  // freed buffers kept for reuse (not in use)
  uint64_t memory_limit = 0;  // Device::set_memory_limit's, 0 for none
};

// Kernels and pipelines of one device.
struct KernelCacheStats {
  uint64_t compiled = 0;     // SPIR-V compiled by shaderc in this process
  uint64_t disk_hits = 0;    // SPIR-V read from the disk cache
  uint64_t memory_hits = 0;  // kernels found already built
  uint64_t pipelines = 0;    // pipelines created
  uint64_t pipeline_cache_hits = 0;    // of those, created from the persisted pipeline cache
  uint64_t pipeline_cache_loaded = 0;  // bytes of pipeline cache read from disk at start
  uint64_t pipeline_cache_saves = 0;   // times the pipeline cache was written to disk
};

// The device's stream: batches submitted, commands recorded, barriers, and host waits for
// results (each download that had to wait for the GPU).
struct StreamStatistics {
  uint64_t submits = 0, commands = 0, barriers = 0, waits = 0;
};

// All physical devices, features before any mask.
std::vector<DeviceInfo> list_devices();

// GPU time of one kernel, summed over its dispatches (Device::kernel_profile).
struct KernelTime {
  std::string kernel;  // its label: template and variant
  uint64_t count = 0;
  double total_ns = 0;
};

class DeviceImpl;

// A logical device with its allocator, kernel cache and stream. Opening the same physical device
// twice gives two independent logical devices (handy for tests of capability masks).
class Device {
 public:
  static std::shared_ptr<Device> open(const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const;
  // Feature present, not masked, and enabled on this logical device.
  bool has(Capability c) const;
  MemoryStats memory_stats() const;
  void reset_peak_memory();
  // Tensor memory in use on this device stays at most `bytes` (0: no limit): an allocation that
  // would pass it, after in-flight work has released what it holds, is OutOfMemory. Memory
  // already in use is kept; freed buffers kept for reuse do not count.
  void set_memory_limit(uint64_t bytes);
  // Frees the memory of dropped tensors kept for reuse (MemoryStats::cached_bytes).
  void clear_buffer_cache();
  KernelCacheStats kernel_cache_stats() const;
  StreamStatistics stream_stats() const;
  // With NX_VULKAN_PROFILE=1 when the device opened: the GPU time per kernel of the work
  // finished since the last call (timestamps; largest first). Empty otherwise.
  std::vector<KernelTime> kernel_profile();
  // Writes the pipeline cache to the cache directory now if it has new pipelines.
  void save_pipeline_cache();
  // Fault injection for tests: the n-th submission from now fails as a driver failure would
  // (see Stream::fail_submission); with `lose_device`, as a lost device would (VK_ERROR_DEVICE_LOST).
  void fail_submission(uint64_t n, bool lose_device = false);
  // Whether the driver reported this device lost. A lost device raises DeviceLost on every use;
  // open a new one (Device::open) to go on.
  bool lost() const;
  // Waits until all work recorded so far has finished.
  void synchronize();

  DeviceImpl& impl() { return *impl_; }

 private:
  explicit Device(std::unique_ptr<DeviceImpl> impl);
  std::unique_ptr<DeviceImpl> impl_;
};

}  // namespace nxv
