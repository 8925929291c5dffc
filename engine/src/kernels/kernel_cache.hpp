// Kernels: GLSL templates (engine/src/kernels/glsl) specialised by macro definitions, compiled
// at run time with shaderc. SPIR-V is cached in memory and on disk (content-addressed); pipelines
// go through a VkPipelineCache persisted per device (validated against its UUID).
// Every kernel binds its buffers by device address through push constants, so all share one
// pipeline layout with no descriptor sets.
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/vk.hpp"
#include "device/device_core.hpp"

namespace nxv {

inline constexpr uint32_t kPushConstantBytes = 128;

struct KernelKey {
  std::string name;  // template file name without extension, e.g. "elementwise"
  std::vector<std::pair<std::string, std::string>> defines;
  uint32_t workgroup_size = 256;  // specialization constant 0 (local_size_x_id = 0)
  // Most workgroups one dispatch of a grid-stride kernel should launch (0: the device's
  // limit). A launch setting, not compiled in, but kept with the kernel that asks for it.
  uint32_t max_workgroups = 0;
};

struct Kernel {
  vk::raii::Pipeline pipeline;
  uint32_t workgroup_size;
  uint32_t max_workgroups = 0;
};

struct KernelCacheStats {
  uint64_t compiled = 0;     // SPIR-V compiled by shaderc in this process
  uint64_t disk_hits = 0;    // SPIR-V read from the disk cache
  uint64_t memory_hits = 0;  // kernels found already built
  uint64_t pipelines = 0;    // pipelines created
};

// The GLSL source of a template; throws InvalidArgument for an unknown name.
const std::string& kernel_template(const std::string& name);
std::vector<std::string> kernel_template_names();

// Compiles `key` to SPIR-V (no cache); throws Error(Driver) with shaderc's message.
std::vector<uint32_t> compile_glsl(const KernelKey& key);

class KernelCache {
 public:
  explicit KernelCache(std::shared_ptr<DeviceCore> core);
  ~KernelCache();  // persists the pipeline cache
  const Kernel& get(const KernelKey& requested);
  // Hot path: `memo` is a short caller-chosen name for a specialisation (op and types); the
  // full key is built by `make` only the first time.
  const Kernel& get_memo(const std::string& memo, const std::function<KernelKey()>& make);
  vk::PipelineLayout layout() const { return **layout_; }
  KernelCacheStats stats() const;
  void save_pipeline_cache();

 private:
  std::vector<uint32_t> spirv_for(const KernelKey& key, const std::string& key_text);

  std::shared_ptr<DeviceCore> core_;
  mutable std::mutex mutex_;
  std::optional<vk::raii::PipelineLayout> layout_;
  std::optional<vk::raii::PipelineCache> pipeline_cache_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::unordered_map<std::string, const Kernel*> memo_;
  KernelCacheStats stats_;
};

}  // namespace nxv
