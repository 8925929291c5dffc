// The one place the engine reads its environment.
#include "common/settings.hpp"

#include <cstdlib>
#include <filesystem>
#include <atomic>
#include <mutex>

#include "common/errors.hpp"

namespace nxv {
namespace {

std::optional<std::string> text(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool flag(const char* name) {
  auto v = text(name);
  return v && *v != "0" && *v != "false";
}

std::optional<bool> switch_(const char* name) {
  auto v = text(name);
  if (!v) return std::nullopt;
  return *v != "0" && *v != "false";
}

std::optional<uint64_t> number(const char* name) {
  auto v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  uint64_t n = std::strtoull(v->c_str(), &end, 0);
  if (end == v->c_str() || *end)
    throw Error(ErrorKind::InvalidArgument, std::string(name) + "=" + *v + " is not a number");
  return n;
}

std::string resolved_cache_dir() {
  if (auto dir = text("NX_VULKAN_CACHE_DIR")) return *dir == "off" ? "" : *dir;
  if (auto xdg = text("XDG_CACHE_HOME")) return (std::filesystem::path(*xdg) / "nx_vulkan").string();
  if (auto home = text("HOME")) return (std::filesystem::path(*home) / ".cache" / "nx_vulkan").string();
  return "";
}

// The user settings that choose kernels become tuning entries (common/tuning.hpp), ahead of
// NX_VULKAN_TUNING's own.
std::string tuning_text() {
  std::string t;
  auto add = [&](const char* env, const char* key) {
    if (auto v = text(env)) (((t += t.empty() ? "" : ";") += key) += '=') += *v;
  };
  add("NX_VULKAN_HOST_BLAS", "host_blas");
  add("NX_VULKAN_DOT_F32", "dot.f32");
  add("NX_VULKAN_CONV_WINOGRAD", "conv.winograd");
  add("NX_VULKAN_HOST_THREADS", "host_threads");
  if (auto v = text("NX_VULKAN_TUNING")) (t += t.empty() ? "" : ";") += *v;
  return t;
}

std::mutex g_mutex;
std::shared_ptr<const Settings> g_settings;
std::atomic<uint64_t> g_generation{0};

}  // namespace

Settings Settings::from_environment() {
  Settings s;
  s.device = text("NX_VULKAN_DEVICE").value_or("");
  s.disable = text("NX_VULKAN_DISABLE").value_or("");
  s.cache_dir = resolved_cache_dir();
  s.buffer_cache_bytes = number("NX_VULKAN_BUFFER_CACHE_BYTES");
  s.tuning = tuning_text();

  s.validation = flag("NX_VULKAN_VALIDATION");
  s.validation_print = flag("NX_VULKAN_VALIDATION_PRINT");
  s.profile = flag("NX_VULKAN_PROFILE");
  s.barrier_all = flag("NX_VULKAN_BARRIER_ALL");
  s.crash_trace = flag("NX_VULKAN_CRASH_TRACE");
  s.phase_times = flag("NX_VULKAN_PHASE_TIMES");
  s.wait_limit_s = number("NX_VULKAN_WAIT_LIMIT_S").value_or(0);
  s.fail_submit = number("NX_VULKAN_FAIL_SUBMIT").value_or(0);
  s.heap_limit = number("NX_VULKAN_HEAP_LIMIT").value_or(0);
  s.max_chunk_bytes = number("NX_VULKAN_MAX_CHUNK_BYTES").value_or(0);

  s.submit_exclusion = switch_("NX_VULKAN_SUBMIT_EXCLUSION");
  s.submit_defer_us = number("NX_VULKAN_SUBMIT_DEFER_US");
  s.stream_reuse = switch_("NX_VULKAN_STREAM_REUSE");
  s.pipeline_save_ms = number("NX_VULKAN_PIPELINE_SAVE_MS");
  s.spirv_optimize = switch_("NX_VULKAN_SPIRV_OPTIMIZE");
  s.wait_spin_us = number("NX_VULKAN_WAIT_SPIN_US");
  return s;
}

std::vector<SettingInfo> settings_read() {
  return {
      {"NX_VULKAN_DEVICE", "user"},
      {"NX_VULKAN_DISABLE", "user"},
      {"NX_VULKAN_CACHE_DIR", "user"},
      {"NX_VULKAN_BUFFER_CACHE_BYTES", "user"},
      {"NX_VULKAN_HOST_BLAS", "user"},
      {"NX_VULKAN_DOT_F32", "user"},
      {"NX_VULKAN_CONV_WINOGRAD", "user"},
      {"NX_VULKAN_TUNING", "user"},
      {"NX_VULKAN_VALIDATION", "diagnostic"},
      {"NX_VULKAN_VALIDATION_PRINT", "diagnostic"},
      {"NX_VULKAN_PROFILE", "diagnostic"},
      {"NX_VULKAN_BARRIER_ALL", "diagnostic"},
      {"NX_VULKAN_CRASH_TRACE", "diagnostic"},
      {"NX_VULKAN_PHASE_TIMES", "diagnostic"},
      {"NX_VULKAN_WAIT_LIMIT_S", "diagnostic"},
      {"NX_VULKAN_FAIL_SUBMIT", "diagnostic"},
      {"NX_VULKAN_HEAP_LIMIT", "diagnostic"},
      {"NX_VULKAN_MAX_CHUNK_BYTES", "diagnostic"},
      {"NX_VULKAN_SUBMIT_EXCLUSION", "device"},
      {"NX_VULKAN_SUBMIT_DEFER_US", "device"},
      {"NX_VULKAN_STREAM_REUSE", "device"},
      {"NX_VULKAN_PIPELINE_SAVE_MS", "device"},
      {"NX_VULKAN_SPIRV_OPTIMIZE", "device"},
      {"NX_VULKAN_WAIT_SPIN_US", "device"},
      {"NX_VULKAN_HOST_THREADS", "user"},
  };
}

ScopedDriverEnvironment::ScopedDriverEnvironment() {
  if (!std::getenv("LP_NUM_THREADS")) set_lavapipe_threads_ = setenv("LP_NUM_THREADS", "0", 0) == 0;
}

ScopedDriverEnvironment::~ScopedDriverEnvironment() {
  if (set_lavapipe_threads_) unsetenv("LP_NUM_THREADS");
}

bool crash_trace_requested() {
  try {
    return Settings::from_environment().crash_trace;
  } catch (...) {
    return false;  // a malformed setting is reported when the first device opens
  }
}

std::shared_ptr<const Settings> settings() {
  std::lock_guard lock(g_mutex);
  if (!g_settings) g_settings = std::make_shared<const Settings>(Settings::from_environment());
  return g_settings;
}

uint64_t settings_generation() { return g_generation.load(); }

std::shared_ptr<const Settings> ScopedSettings::install(std::shared_ptr<const Settings> s) {
  std::lock_guard lock(g_mutex);
  std::swap(g_settings, s);
  g_generation.fetch_add(1);
  return s;
}

}  // namespace nxv
