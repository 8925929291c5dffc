#include "kernels/kernel_cache.hpp"

#include <cstring>

#include <shaderc/shaderc.hpp>

#include "common/errors.hpp"
#include "kernels/disk_cache.hpp"

namespace nxv {

// Generated at build time from kernels/glsl/*.comp (cmake/embed_kernels.cmake).
const std::map<std::string, std::string>& embedded_kernel_sources();

namespace {

constexpr char kSpirvMagic[8] = {'N', 'X', 'V', 'S', 'P', 'V', '1', '\n'};

std::string key_text(const KernelKey& key) {
  // The full source (and every library it may include) is part of the key, so an edited
  // template never meets stale SPIR-V.
  std::string text = "shaderc:" + std::to_string(shaderc_env_version_vulkan_1_3) + "\n" + key.name + "\n";
  for (const auto& [k, v] : key.defines) text += k + "=" + v + "\n";
  text += "--\n" + kernel_template(key.name);
  for (const auto& [name, source] : embedded_kernel_sources())
    if (name.ends_with(".glsl")) text += "--" + name + "\n" + source;
  return text;
}

// Resolves #include "x.glsl" from the embedded library sources.
class EmbeddedIncluder : public shaderc::CompileOptions::IncluderInterface {
  struct Result {
    shaderc_include_result result;
    std::string name, content;
  };

 public:
  shaderc_include_result* GetInclude(const char* requested, shaderc_include_type, const char*, size_t) override {
    auto* r = new Result;
    r->name = requested;
    const auto& sources = embedded_kernel_sources();
    auto it = sources.find(requested);
    r->content = it != sources.end() ? it->second : std::string();
    if (it == sources.end()) r->name.clear();  // shaderc reports an empty name as "not found"
    r->result = {r->name.c_str(), r->name.size(),
                 it != sources.end() ? r->content.c_str() : "unknown include", it != sources.end() ? r->content.size() : 15,
                 r};
    return &r->result;
  }
  void ReleaseInclude(shaderc_include_result* data) override { delete static_cast<Result*>(data->user_data); }
};

std::string pipeline_cache_file_name(const DeviceCore& core) {
  std::string uuid;
  char buf[3];
  for (uint8_t b : core.pipeline_cache_uuid()) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    uuid += buf;
  }
  return "pipelines-" + hex64((uint64_t(core.info().vendor_id) << 32) | core.info().device_id) + "-" + uuid +
         ".bin";
}

// VkPipelineCacheHeaderVersionOne: a cache written for another device or driver is ignored.
bool pipeline_cache_matches(const std::vector<char>& data, const DeviceCore& core) {
  if (data.size() < 32) return false;
  uint32_t header[4];
  std::memcpy(header, data.data(), sizeof header);
  if (header[0] < 32 || header[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return false;
  if (header[2] != core.info().vendor_id || header[3] != core.info().device_id) return false;
  auto uuid = core.pipeline_cache_uuid();
  return std::memcmp(data.data() + 16, uuid.data(), VK_UUID_SIZE) == 0;
}

}  // namespace

const std::string& kernel_template(const std::string& name) {
  const auto& sources = embedded_kernel_sources();
  auto it = sources.find(name);
  if (it == sources.end()) throw Error(ErrorKind::InvalidArgument, "unknown kernel template: " + name);
  return it->second;
}

std::vector<std::string> kernel_template_names() {
  std::vector<std::string> names;
  for (const auto& [name, _] : embedded_kernel_sources())
    if (!name.ends_with(".glsl")) names.push_back(name);
  return names;
}

std::vector<uint32_t> compile_glsl(const KernelKey& key) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_3);
  options.SetTargetSpirv(shaderc_spirv_version_1_6);
  options.SetOptimizationLevel(shaderc_optimization_level_performance);
  for (const auto& [k, v] : key.defines) options.AddMacroDefinition(k, v);
  options.SetIncluder(std::make_unique<EmbeddedIncluder>());
  const std::string& source = kernel_template(key.name);
  auto result = compiler.CompileGlslToSpv(source, shaderc_compute_shader, (key.name + ".comp").c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success) {
    std::string defs;
    for (const auto& [k, v] : key.defines) defs += " " + k + "=" + v;
    throw Error(ErrorKind::Driver, "compiling kernel '" + key.name + "' [" + defs + " ] failed:\n" +
                                       result.GetErrorMessage());
  }
  return {result.cbegin(), result.cend()};
}

KernelCache::KernelCache(std::shared_ptr<DeviceCore> core) : core_(std::move(core)) {
  translate_vk("creating the pipeline layout", [&] {
    vk::PushConstantRange range{.stageFlags = vk::ShaderStageFlagBits::eCompute, .offset = 0,
                                .size = kPushConstantBytes};
    layout_.emplace(core_->device(),
                    vk::PipelineLayoutCreateInfo{.pushConstantRangeCount = 1, .pPushConstantRanges = &range});
    std::vector<char> initial;
    if (auto dir = cache_directory())
      if (auto data = read_file(*dir / pipeline_cache_file_name(*core_)))
        if (pipeline_cache_matches(*data, *core_)) initial = std::move(*data);
    pipeline_cache_.emplace(core_->device(),
                            vk::PipelineCacheCreateInfo{.initialDataSize = initial.size(),
                                                        .pInitialData = initial.data()});
  });
}

KernelCache::~KernelCache() {
  try {
    save_pipeline_cache();
  } catch (...) {
    // Persisting is an optimisation; a failure here must not escape a destructor.
  }
}

void KernelCache::save_pipeline_cache() {
  auto dir = cache_directory();
  if (!dir) return;
  std::lock_guard lock(mutex_);
  if (stats_.pipelines == 0) return;  // nothing new to persist
  auto data = pipeline_cache_->getData();
  write_file_atomically(*dir / pipeline_cache_file_name(*core_),
                        std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
}

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
          ++stats_.disk_hits;
          return words;
        }
      }
    }
  }
  auto words = compile_glsl(key);
  ++stats_.compiled;
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

const Kernel& KernelCache::get(const KernelKey& requested) {
  // Device-wide switches every template may use.
  KernelKey key = requested;
  const auto& fc = core_->float_controls();
  key.defines.emplace_back("NXV_FC_DENORM32", fc.denorm_preserve32 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_DENORM64", fc.denorm_preserve64 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_SZINP32", fc.signed_zero_inf_nan32 ? "1" : "0");
  key.defines.emplace_back("NXV_FC_SZINP64", fc.signed_zero_inf_nan64 ? "1" : "0");
  // The in-memory key is the specialisation alone (sources are fixed for the process); the
  // full source text is only needed to name SPIR-V on disk, on a miss.
  std::string map_key = key.name;
  for (const auto& [k, v] : key.defines) (((map_key += '|') += k) += '=') += v;
  map_key += "|wg=" + std::to_string(key.workgroup_size);
  map_key += "|max_wg=" + std::to_string(key.max_workgroups);
  std::lock_guard lock(mutex_);
  if (auto it = kernels_.find(map_key); it != kernels_.end()) {
    ++stats_.memory_hits;
    return *it->second;
  }
  std::string text = key_text(key);
  auto words = spirv_for(key, text);
  return translate_vk("creating a compute pipeline", [&]() -> const Kernel& {
    vk::raii::ShaderModule module(core_->device(),
                                  vk::ShaderModuleCreateInfo{.codeSize = words.size() * 4, .pCode = words.data()});
    vk::SpecializationMapEntry entry{.constantID = 0, .offset = 0, .size = sizeof(uint32_t)};
    vk::SpecializationInfo spec{.mapEntryCount = 1, .pMapEntries = &entry, .dataSize = sizeof(uint32_t),
                                .pData = &key.workgroup_size};
    vk::ComputePipelineCreateInfo info{
        .stage = {.stage = vk::ShaderStageFlagBits::eCompute, .module = *module, .pName = "main",
                  .pSpecializationInfo = &spec},
        .layout = **layout_};
    auto kernel = std::make_unique<Kernel>(
        Kernel{vk::raii::Pipeline(core_->device(), *pipeline_cache_, info), key.workgroup_size, key.max_workgroups});
    ++stats_.pipelines;
    return *kernels_.emplace(map_key, std::move(kernel)).first->second;
  });
}

const Kernel& KernelCache::get_memo(const std::string& memo, const std::function<KernelKey()>& make) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = memo_.find(memo); it != memo_.end()) {
      ++stats_.memory_hits;
      return *it->second;
    }
  }
  const Kernel& kernel = get(make());
  std::lock_guard lock(mutex_);
  memo_.emplace(memo, &kernel);
  return kernel;
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace nxv
