// The engine's settings: what users and diagnostics set in the environment, parsed in one
// place (settings.cpp, the only file that reads the environment). Devices read them when they
// open; kernel choices read the Tuning (common/tuning.hpp) instead.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nxv/diagnostics.hpp"

namespace nxv {

struct Settings {
  // User settings.
  std::string device;                             // NX_VULKAN_DEVICE: an index or part of a name
  std::string disable;                            // NX_VULKAN_DISABLE: capabilities masked
  std::string cache_dir;                          // resolved from NX_VULKAN_CACHE_DIR; "" = no disk cache
  std::optional<uint64_t> buffer_cache_bytes;     // NX_VULKAN_BUFFER_CACHE_BYTES
  std::string tuning;                             // NX_VULKAN_TUNING plus the user settings that choose kernels

  // Diagnostics.
  bool validation = false;          // NX_VULKAN_VALIDATION=1
  bool validation_print = false;    // NX_VULKAN_VALIDATION_PRINT=1
  bool profile = false;             // NX_VULKAN_PROFILE=1: GPU timestamps per dispatch
  bool barrier_all = false;         // NX_VULKAN_BARRIER_ALL=1
  bool crash_trace = false;         // NX_VULKAN_CRASH_TRACE=1
  bool phase_times = false;         // NX_VULKAN_PHASE_TIMES=1: host time per recording phase
  uint64_t wait_limit_s = 0;        // NX_VULKAN_WAIT_LIMIT_S; 0 = unbounded waits
  uint64_t fail_submit = 0;         // NX_VULKAN_FAIL_SUBMIT: the n-th submission fails
  uint64_t heap_limit = 0;          // NX_VULKAN_HEAP_LIMIT: bytes per device-local heap
  uint64_t max_chunk_bytes = 0;     // NX_VULKAN_MAX_CHUNK_BYTES

  // Overrides of the device profile's defaults (device/device_profile.hpp).
  std::optional<bool> submit_exclusion;        // NX_VULKAN_SUBMIT_EXCLUSION
  std::optional<uint64_t> submit_defer_us;     // NX_VULKAN_SUBMIT_DEFER_US
  std::optional<bool> stream_reuse;            // NX_VULKAN_STREAM_REUSE
  std::optional<uint64_t> pipeline_save_ms;    // NX_VULKAN_PIPELINE_SAVE_MS
  std::optional<bool> spirv_optimize;          // NX_VULKAN_SPIRV_OPTIMIZE
  std::optional<uint64_t> wait_spin_us;        // NX_VULKAN_WAIT_SPIN_US

  // Parses the environment now (no caching).
  static Settings from_environment();
};


// The process's settings: parsed from the environment when first asked for.
std::shared_ptr<const Settings> settings();
// Counts the settings installed so far (ScopedSettings), so that what derives from them
// (the process's tuning) follows.
uint64_t settings_generation();

// Sets the environment a Vulkan driver reads when its instance opens, for as long as it lives,
// and leaves what the user set alone: LP_NUM_THREADS=0, so that lavapipe runs each dispatch in
// its queue thread instead of handing it to its worker threads and back (that hand-over costs
// more than a small dispatch's work; see the README's settings).
class ScopedDriverEnvironment {
 public:
  ScopedDriverEnvironment();
  ~ScopedDriverEnvironment();
  ScopedDriverEnvironment(const ScopedDriverEnvironment&) = delete;
  ScopedDriverEnvironment& operator=(const ScopedDriverEnvironment&) = delete;

 private:
  bool set_lavapipe_threads_ = false;
};

// Tests: replaces the process's settings while it lives (devices opened meanwhile see them).
class ScopedSettings {
 public:
  template <class Change>
  explicit ScopedSettings(Change change) {
    Settings s = *settings();
    change(s);
    previous_ = install(std::make_shared<const Settings>(std::move(s)));
  }
  ~ScopedSettings() { install(previous_); }
  ScopedSettings(const ScopedSettings&) = delete;
  ScopedSettings& operator=(const ScopedSettings&) = delete;

 private:
  static std::shared_ptr<const Settings> install(std::shared_ptr<const Settings> s);
  std::shared_ptr<const Settings> previous_;
};

}  // namespace nxv
