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
#include "kernels/kernel_variant.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

inline constexpr uint32_t kPushConstantBytes = 128;

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

// The names of the engine's own templates (its *.comp files).
std::vector<std::string> engine_kernel_template_names();

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
  // Hot path: a kernel by its typed variant (kernel_variant.hpp). Its source is built only the
  // first time. Compiles run outside the cache's lock: two threads asking for two new variants
  // compile in parallel, and a thread asking for a built one never waits for a compile (one
  // asking for the variant being compiled waits for that compile only).
  template <KernelVariant V>
  const Kernel& get(const V& variant) {
    return get_variant(variant_key(variant), [&] { return variant_source(variant); });
  }
  // `key` as this device compiles it: with the device-wide switches every template may read.
  KernelKey for_device(const KernelKey& key) const;
  vk::PipelineLayout layout() const { return **layout_; }
  KernelCacheStats stats() const;
  // Writes the pipeline cache now if it has new pipelines (it is also saved in the background
  // after each batch of new pipelines, and when the device closes).
  void save_pipeline_cache();

 private:
  struct Entry;
  using EntryMap = std::unordered_map<std::string, std::shared_ptr<Entry>>;
  // A source's entry builds its pipeline; a variant's resolves to its source's entry.
  const Kernel& get_or_build(EntryMap& map, const std::string& key, const std::function<KernelKey()>& source);
  const Kernel& get_variant(const std::string& key, const std::function<KernelKey()>& source);
  const Kernel* build(const KernelKey& requested);
  std::vector<uint32_t> spirv_for(const KernelKey& key, const std::string& key_text);

  std::shared_ptr<DeviceCore> core_;
  std::optional<vk::raii::PipelineLayout> layout_;
  PipelineStore pipelines_store_;
  mutable std::mutex mutex_;  // guards the maps below (never held during a compile)
  EntryMap by_source_;   // by the source's text
  EntryMap by_variant_;  // by variant_key
  std::atomic<uint64_t> compiled_{0}, disk_hits_{0}, memory_hits_{0}, pipelines_{0};
};

}  // namespace nxv
