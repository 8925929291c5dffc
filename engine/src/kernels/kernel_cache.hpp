// Kernels: GLSL templates specialised by macro definitions, compiled at run time with shaderc.
// Templates live beside the code that launches them (engine/src/ops/<family>/*.comp,
// engine/src/memory/glsl, engine/src/kernels/glsl) and share the libraries (*.glsl, *.h).
// SPIR-V is cached in memory and on disk (content-addressed); pipelines go through a
// VkPipelineCache persisted per device (validated against its UUID).
// Every kernel binds its buffers by device address through push constants, so all share one
// pipeline layout with no descriptor sets.
#pragma once
#include <array>
#include <map>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/vk.hpp"
#include "kernels/pipeline_store.hpp"
#include "device/device_core.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

inline constexpr uint32_t kPushConstantBytes = 128;

// The source of a kernel: a template and its macro definitions, plus the specialization
// constants every template may declare: workgroup shape (constant_id 0, 1, 2 for
// local_size_{x,y,z}_id) and shared-memory bytes (constant_id 3).
struct KernelKey {
  std::string name;  // template file name without extension, e.g. "elementwise"
  std::vector<std::pair<std::string, std::string>> defines;
  uint32_t workgroup_size = 256;  // x
  uint32_t workgroup_y = 1, workgroup_z = 1;
  uint32_t shared_bytes = 0;
  // Subgroup size the pipeline must run with (0: the driver's choice). Needs the device's
  // subgroup size control; requested with full subgroups.
  uint32_t required_subgroup_size = 0;
  // Most workgroups one dispatch of a grid-stride kernel should launch (0: the device's
  // limit). A launch setting, not compiled in, but kept with the kernel that asks for it.
  uint32_t max_workgroups = 0;
  // Generated GLSL (a fused chain's functions), served to the template as the include
  // "nxv_generated.glsl".
  std::string generated;
};

// What selects one compiled kernel, as a typed value: the family (or engine layer) that owns
// the template, an op or variant kind within it, the types involved (output first), the
// layout class, the tile configuration and feature switches. Shapes and strides are not part
// of it: they are run-time parameters. Launch limits are not either.
struct VariantKey {
  uint16_t family = 0;  // a FamilyId, or one of the kLayer* values below for engine layers
  uint16_t op = 0;      // an OpId or the family's own variant kind
  std::array<DType, 4> types{};
  uint8_t type_count = 0;
  uint8_t layout = 0;
  uint32_t tile = 0;
  uint32_t switches = 0;
  uint32_t workgroup = 0;  // a launch-sized workgroup (linear_workgroup_size); 0: the template's

  bool operator==(const VariantKey&) const = default;
};
// Engine layers below the op families that own kernels (family ids count up from 0).
inline constexpr uint16_t kLayerMemory = 0xff00;
inline constexpr uint16_t kLayerProbe = 0xff01;

struct VariantKeyHash {
  size_t operator()(const VariantKey& k) const noexcept;
};

struct Kernel {
  vk::raii::Pipeline pipeline;
  uint32_t workgroup_size;
  uint32_t max_workgroups = 0;
  std::array<uint32_t, 3> workgroup{};
  std::string label;  // the key's name and defines, for diagnostics
};


// Thrown instead of compiling (or waiting for another thread's compile) while a
// CompileFreeScope is active on this thread: its caller may not block (a normal BEAM
// scheduler) and retries where it may.
struct KernelNotReady : std::runtime_error {
  KernelNotReady() : std::runtime_error("a kernel needs compiling") {}
};

class CompileFreeScope {
 public:
  CompileFreeScope();
  ~CompileFreeScope();
  CompileFreeScope(const CompileFreeScope&) = delete;
  CompileFreeScope& operator=(const CompileFreeScope&) = delete;
  static bool active();

 private:
  bool previous_;
};

// The GLSL source of a template; throws InvalidArgument for an unknown name.
const std::string& kernel_template(const std::string& name);

// Templates from outside the engine (the probes that tests and benchmarks build, test/probes),
// found by name after the engine's own; their headers may be #included.
void add_kernel_templates(const std::map<std::string, std::string>& sources);

// Compiles `key` to SPIR-V (no cache); throws Error(Driver) with shaderc's message.
std::vector<uint32_t> compile_glsl(const KernelKey& key);

class KernelCache {
 public:
  explicit KernelCache(std::shared_ptr<DeviceCore> core);
  // A kernel by its full source key (probes, tests).
  const Kernel& get(const KernelKey& key);
  // Hot path: a kernel by its typed variant; `source` builds its KernelKey, called only the
  // first time. Compiles run outside the cache's lock: two threads asking for two new variants
  // compile in parallel, and a thread asking for a built one never waits for a compile (one
  // asking for the variant being compiled waits for that compile only).
  const Kernel& get(const VariantKey& variant, const std::function<KernelKey()>& source);
  // The same for a variant extended by text its VariantKey cannot hold (a generated
  // epilogue's code and switches): `extension` names what `source` adds to the variant.
  const Kernel& get(const VariantKey& variant, const std::string& extension, const std::function<KernelKey()>& source);
  vk::PipelineLayout layout() const { return **layout_; }
  KernelCacheStats stats() const;
  // Writes the pipeline cache now if it has new pipelines (it is also saved in the background
  // after each batch of new pipelines, and when the device closes).
  void save_pipeline_cache();

 private:
  struct Entry;
  template <typename Map, typename Key>
  const Kernel& get_or_build(Map& map, const Key& key, const std::function<KernelKey()>& source);
  const Kernel* build(const KernelKey& requested);
  std::vector<uint32_t> spirv_for(const KernelKey& key, const std::string& key_text);

  std::shared_ptr<DeviceCore> core_;
  std::optional<vk::raii::PipelineLayout> layout_;
  PipelineStore pipelines_store_;
  mutable std::mutex mutex_;  // guards the maps below (never held during a compile)
  std::unordered_map<std::string, std::shared_ptr<Entry>> by_source_;
  std::unordered_map<VariantKey, std::shared_ptr<Entry>, VariantKeyHash> by_variant_;
  // Not a plain string: get_or_build builds string keys (sources) itself, variants through get(KernelKey).
  struct ExtendedVariant {
    std::string bytes;
    bool operator==(const ExtendedVariant&) const = default;
  };
  struct ExtendedVariantHash {
    size_t operator()(const ExtendedVariant& k) const noexcept { return std::hash<std::string>{}(k.bytes); }
  };
  std::unordered_map<ExtendedVariant, std::shared_ptr<Entry>, ExtendedVariantHash> by_extended_variant_;
  std::atomic<uint64_t> compiled_{0}, disk_hits_{0}, memory_hits_{0}, pipelines_{0};
};

}  // namespace nxv
