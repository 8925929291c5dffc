#include "kernels/kernel_cache.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <deque>
#include <map>
#include <mutex>

#include <shaderc/shaderc.hpp>

#include "common/errors.hpp"
#include "kernels/disk_cache.hpp"
#include "kernels/spirv_bf16.hpp"

namespace nxv {

// Generated at build time from kernels/glsl/*.comp (cmake/embed_kernels.cmake).
const std::map<std::string, std::string>& embedded_kernel_sources();

namespace {

std::mutex g_added_mutex;
std::map<std::string, std::string>& added_sources() {
  static std::map<std::string, std::string> sources;
  return sources;
}

// An engine source, else an added one; null where neither has `name`.
const std::string* find_source(const std::string& name) {
  const auto& sources = embedded_kernel_sources();
  if (auto it = sources.find(name); it != sources.end()) return &it->second;
  std::lock_guard lock(g_added_mutex);
  auto it = added_sources().find(name);
  return it == added_sources().end() ? nullptr : &it->second;  // entries are never erased
}

constexpr char kSpirvMagic[8] = {'N', 'X', 'V', 'S', 'P', 'V', '1', '\n'};

std::string key_text(const KernelKey& key) {
  // The full source (and every library and shared struct header it may include) is part of
  // the key, so an edited template or push-constant struct never meets stale SPIR-V.
  std::string text = "shaderc:" + std::to_string(shaderc_env_version_vulkan_1_3) + "\n" + key.name + "\n";
  for (const auto& [k, v] : key.defines) text += k + "=" + v + "\n";
  text += "--\n" + kernel_template(key.name);
  if (!key.generated.empty()) text += "--nxv_generated.glsl\n" + key.generated;
  for (const auto& [name, source] : embedded_kernel_sources())
    if (name.ends_with(".glsl") || name.ends_with(".h")) text += "--" + name + "\n" + source;
  std::lock_guard lock(g_added_mutex);
  for (const auto& [name, source] : added_sources())
    if (name.ends_with(".h")) text += "--" + name + "\n" + source;
  return text;
}

// Resolves #include "x.glsl" from the embedded library sources.
class EmbeddedIncluder : public shaderc::CompileOptions::IncluderInterface {
  struct Result {
    shaderc_include_result result;
    std::string name, content;
  };

 public:
  explicit EmbeddedIncluder(std::string generated) : generated_(std::move(generated)) {}

  shaderc_include_result* GetInclude(const char* requested, shaderc_include_type, const char*, size_t) override {
    auto* r = new Result;
    r->name = requested;
    const std::string* source = find_source(r->name);
    bool generated = r->name == "nxv_generated.glsl";
    bool found = generated || source;
    r->content = generated ? generated_ : found ? *source : std::string("unknown include");
    if (!found) r->name.clear();  // shaderc reports an empty name as "not found"
    r->result = {r->name.c_str(), r->name.size(), r->content.c_str(), r->content.size(), r};
    return &r->result;
  }
  void ReleaseInclude(shaderc_include_result* data) override { delete static_cast<Result*>(data->user_data); }

 private:
  std::string generated_;
};

}  // namespace

const std::string& kernel_template(const std::string& name) {
  const std::string* source = find_source(name);
  if (!source) throw Error(ErrorKind::InvalidArgument, "unknown kernel template: " + name);
  return *source;
}

void add_kernel_templates(const std::map<std::string, std::string>& sources) {
  std::lock_guard lock(g_added_mutex);
  for (const auto& [name, source] : sources) added_sources().emplace(name, source);
}

std::vector<uint32_t> compile_glsl(const KernelKey& key) {
  // One compiler for the process (shaderc allows concurrent compiles on it). glslang builds
  // its built-in symbol tables once while any compiler lives and drops them with the last:
  // a compiler per call rebuilt them for every kernel, ~100 ms each on a 2-core machine.
  static const shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_3);
  options.SetTargetSpirv(shaderc_spirv_version_1_6);
  // NXV_SPIRV_AS_IS (with_device_switches): the driver optimises anyway (CPU drivers, whose
  // compilers run LLVM on it), so spirv-opt's passes only add to a cold compile.
  auto defined = [&](const char* name) {
    return std::any_of(key.defines.begin(), key.defines.end(),
                       [&](const auto& d) { return d.first == name && d.second == "1"; });
  };
  // NXV_SPIRV_BF16: the kernel is written in f16 and retyped to bf16 after compiling and
  // optimising (spirv_bf16.hpp); the retyping refuses any f16 value spirv-opt might have made.
  bool bf16 = defined("NXV_SPIRV_BF16");
  bool as_is = defined("NXV_SPIRV_AS_IS");
  options.SetOptimizationLevel(as_is ? shaderc_optimization_level_zero : shaderc_optimization_level_performance);
  for (const auto& [k, v] : key.defines) options.AddMacroDefinition(k, v);
  options.SetIncluder(std::make_unique<EmbeddedIncluder>(key.generated));
  const std::string& source = kernel_template(key.name);
  auto result = compiler.CompileGlslToSpv(source, shaderc_compute_shader, (key.name + ".comp").c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success) {
    std::string defs;
    for (const auto& [k, v] : key.defines) defs += " " + k + "=" + v;
    throw Error(ErrorKind::Driver, "compiling kernel '" + key.name + "' [" + defs + " ] failed:\n" +
                                       result.GetErrorMessage());
  }
  std::vector<uint32_t> words(result.cbegin(), result.cend());
  return bf16 ? spirv_f16_to_bf16(words) : words;
}


// One kernel being built or built: the first thread to ask builds it outside the cache's lock;
// others asking for the same one wait on the entry, not on the cache.
struct KernelCache::Entry {
  std::atomic<const Kernel*> ready{nullptr};
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::exception_ptr error;
  std::unique_ptr<Kernel> owned;  // set for entries keyed by source
};

KernelCache::KernelCache(std::shared_ptr<DeviceCore> core) : core_(std::move(core)), pipelines_store_(core_) {
  translate_vk("creating the pipeline layout", [&] {
    vk::PushConstantRange range{.stageFlags = vk::ShaderStageFlagBits::eCompute, .offset = 0,
                                .size = kPushConstantBytes};
    layout_.emplace(core_->device(),
                    vk::PipelineLayoutCreateInfo{.pushConstantRangeCount = 1, .pPushConstantRanges = &range});
  });
}

void KernelCache::save_pipeline_cache() { pipelines_store_.save(); }

std::vector<uint32_t> KernelCache::spirv_for(const KernelKey& key, const std::string& text) {
  auto dir = cache_directory();
  std::filesystem::path path;
  if (dir) {
    path = *dir / "spirv" / (hex64(fnv1a64(text)) + ".spv");
    if (auto data = read_file(path)) {
      // Layout: magic, u64 key length, key, SPIR-V words.
      uint64_t len = 0;
      if (data->size() >= sizeof kSpirvMagic + 8 && std::memcmp(data->data(), kSpirvMagic, sizeof kSpirvMagic) == 0) {
        std::memcpy(&len, data->data() + sizeof kSpirvMagic, 8);
        size_t body = sizeof kSpirvMagic + 8 + len;
        if (body <= data->size() && (data->size() - body) % 4 == 0 && data->size() > body &&
            std::string_view(data->data() + sizeof kSpirvMagic + 8, len) == text) {
          std::vector<uint32_t> words((data->size() - body) / 4);
          std::memcpy(words.data(), data->data() + body, words.size() * 4);
          ++disk_hits_;
          return words;
        }
      }
    }
  }
  auto words = compile_glsl(key);
  ++compiled_;
  if (dir) {
    std::string blob(kSpirvMagic, sizeof kSpirvMagic);
    uint64_t len = text.size();
    blob.append(reinterpret_cast<const char*>(&len), 8);
    blob += text;
    blob.append(reinterpret_cast<const char*>(words.data()), words.size() * 4);
    write_file_atomically(path, blob);
  }
  return words;
}

namespace {

KernelKey with_device_switches(const KernelKey& requested, const DeviceCore& core) {
  // Device-wide switches every template may use.
  KernelKey key = requested;
  const auto& fc = core.float_controls();
  key.defines.emplace_back("NXV_FC_DENORM32", fc.denorm_preserve32 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_DENORM64", fc.denorm_preserve64 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_SZINP32", fc.signed_zero_inf_nan32 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_SZINP64", fc.signed_zero_inf_nan64 ? "1" : "0");
  // SPIR-V as glslang writes it, unoptimised, where the profile says so (CPU drivers). Defined
  // only there, so that the keys of the other devices' kernels stay as they were.
  if (!core.profile().spirv_optimize) key.defines.emplace_back("NXV_SPIRV_AS_IS", "1");
  return key;
}

std::string source_map_key(const KernelKey& key) {
  std::string map_key = key.name;
  for (const auto& [k, v] : key.defines) (((map_key += '|') += k) += '=') += v;
  for (uint32_t v : {key.workgroup_size, key.workgroup_y, key.workgroup_z, key.shared_bytes,
                     key.required_subgroup_size, key.max_workgroups})
    (map_key += '|') += std::to_string(v);
  if (!key.generated.empty()) (map_key += "|generated:") += key.generated;
  return map_key;
}

std::string kernel_label(const KernelKey& key) {
  std::string label = key.name;
  for (const auto& [k, v] : key.defines) (((label += label.size() == key.name.size() ? '[' : ',') += k) += '=') += v;
  if (label.size() > key.name.size()) label += ']';
  if (label.size() > 160) label.resize(160);
  return label;
}

}  // namespace

const Kernel* KernelCache::build(const KernelKey& key) {
  if (key.required_subgroup_size) {
    const auto& info = core_->info();
    if (!info.features.subgroup_size_control || key.required_subgroup_size < info.min_subgroup_size ||
        key.required_subgroup_size > info.max_subgroup_size)
      throw Error(ErrorKind::Unsupported, "kernel '" + key.name + "' needs subgroups of " +
                                              std::to_string(key.required_subgroup_size) +
                                              ", which the device cannot require");
  }
  std::string text = key_text(key);
  auto words = spirv_for(key, text);
  return translate_vk("creating a compute pipeline", [&]() -> const Kernel* {
    vk::raii::ShaderModule module(core_->device(),
                                  vk::ShaderModuleCreateInfo{.codeSize = words.size() * 4, .pCode = words.data()});
    const std::array<uint32_t, 4> constants{key.workgroup_size, key.workgroup_y, key.workgroup_z, key.shared_bytes};
    std::array<vk::SpecializationMapEntry, 4> entries;
    for (uint32_t i = 0; i < 4; ++i) entries[i] = vk::SpecializationMapEntry(i, 4 * i, 4);
    vk::SpecializationInfo spec{.mapEntryCount = uint32_t(entries.size()), .pMapEntries = entries.data(),
                                .dataSize = sizeof constants, .pData = constants.data()};
    vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{.requiredSubgroupSize = key.required_subgroup_size};
    vk::PipelineShaderStageCreateInfo stage{.stage = vk::ShaderStageFlagBits::eCompute, .module = *module,
                                            .pName = "main", .pSpecializationInfo = &spec};
    if (key.required_subgroup_size) {
      stage.pNext = &subgroup;
      if (core_->info().features.compute_full_subgroups && key.workgroup_size % key.required_subgroup_size == 0)
        stage.flags = vk::PipelineShaderStageCreateFlagBits::eRequireFullSubgroups;
    }
    vk::ComputePipelineCreateInfo info{.stage = stage, .layout = **layout_};
    auto kernel = std::make_unique<Kernel>(Kernel{pipelines_store_.create(info),
                                                  key.workgroup_size, key.max_workgroups,
                                                  {key.workgroup_size, key.workgroup_y, key.workgroup_z},
                                                  kernel_label(key)});
    ++pipelines_;
    return kernel.release();
  });
}

const Kernel& KernelCache::get_or_build(EntryMap& map, const std::string& key, const std::function<KernelKey()>& source) {
  std::shared_ptr<Entry> entry;
  bool builder = false;
  {
    std::lock_guard lock(mutex_);
    auto it = map.find(key);
    if (it != map.end()) {
      entry = it->second;
      if (CompileFreeScope::active() && !entry->ready.load(std::memory_order_acquire)) throw KernelNotReady();
    } else {
      if (CompileFreeScope::active()) throw KernelNotReady();
      entry = std::make_shared<Entry>();
      map.emplace(key, entry);
      builder = true;
    }
  }
  if (!builder) {
    if (const Kernel* k = entry->ready.load(std::memory_order_acquire)) {
      ++memory_hits_;
      return *k;
    }
    std::unique_lock wait(entry->mutex);
    entry->done_cv.wait(wait, [&] { return entry->done; });
    if (entry->error) std::rethrow_exception(entry->error);
    ++memory_hits_;
    return *entry->ready.load(std::memory_order_acquire);
  }
  const Kernel* kernel = nullptr;
  std::exception_ptr error;
  try {
    if (&map == &by_source_) {
      entry->owned.reset(const_cast<Kernel*>(build(source())));
      kernel = entry->owned.get();
    } else {
      kernel = &get(source());
    }
  } catch (...) {
    error = std::current_exception();
  }
  if (error) {
    std::lock_guard lock(mutex_);
    map.erase(key);  // a later call tries again
  }
  {
    std::lock_guard lock(entry->mutex);
    entry->done = true;
    entry->error = error;
    entry->ready.store(kernel, std::memory_order_release);
  }
  entry->done_cv.notify_all();
  if (error) std::rethrow_exception(error);
  return *kernel;
}

const Kernel& KernelCache::get(const KernelKey& requested) {
  KernelKey key = with_device_switches(requested, *core_);
  return get_or_build(by_source_, source_map_key(key), [&] { return key; });
}

namespace {
thread_local bool compile_free = false;
}  // namespace

CompileFreeScope::CompileFreeScope() : previous_(compile_free) { compile_free = true; }
CompileFreeScope::~CompileFreeScope() { compile_free = previous_; }
bool CompileFreeScope::active() { return compile_free; }

const Kernel& KernelCache::get_variant(const std::string& key, const std::function<KernelKey()>& source) {
  return get_or_build(by_variant_, key, source);
}

KernelKey checked_source(const char* template_name, KernelKey key) {
  if (key.name != template_name)
    throw std::logic_error("a variant of kernel template '" + std::string(template_name) +
                           "' built the source of '" + key.name + "'");
  return key;
}

std::vector<std::string> engine_kernel_template_names() {
  std::vector<std::string> names;
  for (const auto& [name, source] : embedded_kernel_sources())
    if (name.find('.') == std::string::npos) names.push_back(name);
  return names;
}

KernelKey KernelCache::for_device(const KernelKey& key) const { return with_device_switches(key, *core_); }

KernelCacheStats KernelCache::stats() const {
  auto store = pipelines_store_.stats();
  return {compiled_.load(), disk_hits_.load(), memory_hits_.load(), pipelines_.load(),
          store.cache_hits, store.loaded_bytes, store.saves};
}

}  // namespace nxv
