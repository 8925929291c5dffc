#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "common/errors.hpp"
#include "common/settings.hpp"
#include "device/device_impl.hpp"
#include "kernels/disk_cache.hpp"
#include "device/device_info.hpp"
#include "device/instance.hpp"

namespace nxv {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

size_t choose_device(const std::vector<DeviceInfo>& infos, const std::string& selector) {
  if (infos.empty())
    throw Error(ErrorKind::Unsupported,
                "no Vulkan device found: install the GPU's Vulkan driver (NVIDIA's driver; Mesa's "
                "mesa-vulkan-drivers for AMD and Intel), or Mesa's lavapipe (mesa-vulkan-drivers) to run on the CPU; "
                "`vulkaninfo --summary` (vulkan-tools) lists what the loader finds");
  if (is_number(selector)) {
    size_t index = std::stoul(selector);
    if (index >= infos.size())
      throw Error(ErrorKind::InvalidArgument, "device index " + selector + " out of range (" +
                                                  std::to_string(infos.size()) + " devices)");
    return index;
  }
  if (!selector.empty()) {
    // A UUID prefix (8 hex digits or more, dashes ignored) names one physical device across
    // reboots and driver updates, where indices may move.
    std::string hex = lower(selector);
    std::erase(hex, '-');
    bool uuid_like = hex.size() >= 8 && std::all_of(hex.begin(), hex.end(), [](unsigned char c) { return std::isxdigit(c); });
    if (uuid_like) {
      std::vector<size_t> found;
      for (size_t i = 0; i < infos.size(); ++i)
        if (infos[i].uuid.starts_with(hex)) found.push_back(i);
      if (found.size() == 1) return found[0];
      if (found.size() > 1)
        throw Error(ErrorKind::InvalidArgument, "UUID prefix '" + selector + "' matches " + std::to_string(found.size()) +
                                                    " devices; give more of it");
    }
    for (size_t i = 0; i < infos.size(); ++i)
      if (lower(infos[i].name).find(lower(selector)) != std::string::npos) return i;
    std::string names;
    for (const auto& d : infos) names += " '" + d.name + "'";
    throw Error(ErrorKind::InvalidArgument, "no Vulkan device matches '" + selector + "'; devices:" + names);
  }
  size_t best = 0;
  for (size_t i = 1; i < infos.size(); ++i)
    if (device_type_rank(infos[i].type) < device_type_rank(infos[best].type)) best = i;
  return best;
}

}  // namespace

uint32_t parse_capability_mask(const std::string& text) {
  uint32_t mask = 0;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c); }),
               item.end());
    item = lower(item);
    if (item.empty()) continue;
    if (item == "f64" || item == "float64") mask |= kCapFloat64;
    else if (item == "int64" || item == "s64") mask |= kCapInt64;
    else if (item == "f16" || item == "float16") mask |= kCapFloat16;
    else if (item == "bf16" || item == "bfloat16") mask |= kCapBFloat16;
    // coopmat also turns coopmat2 off (DeviceCore), which builds on it.
    else if (item == "coopmat" || item == "cooperative_matrix") mask |= kCapCooperativeMatrix;
    else if (item == "coopmat2" || item == "cooperative_matrix2") mask |= kCapCooperativeMatrix2;
    else if (item == "subgroup" || item == "subgroups") mask |= kCapSubgroupOps;
    else if (item == "subgroup_size" || item == "subgroup_size_control") mask |= kCapSubgroupSizeControl;
    else if (item == "conditional_rendering") mask |= kCapConditionalRendering;
    else if (item == "all") mask |= kAllCapabilities;
    else throw Error(ErrorKind::InvalidArgument,
                     "unknown capability '" + item +
                         "' (known: f64, int64, f16, bf16, coopmat, coopmat2, subgroup, subgroup_size, "
                         "conditional_rendering, all)");
  }
  return mask;
}

std::vector<DeviceInfo> list_devices() {
  auto instance = Instance::get();
  return translate_vk("listing devices", [&] {
    std::vector<DeviceInfo> infos;
    auto physicals = instance->instance().enumeratePhysicalDevices();
    for (uint32_t i = 0; i < physicals.size(); ++i) infos.push_back(read_device_info(physicals[i], i));
    return infos;
  });
}

std::unique_ptr<DeviceImpl> make_impl(const DeviceOptions& options) {
  auto instance = Instance::get();
  return translate_vk("opening a device", [&] {
    auto physicals = instance->instance().enumeratePhysicalDevices();
    std::vector<DeviceInfo> infos;
    for (uint32_t i = 0; i < physicals.size(); ++i) infos.push_back(read_device_info(physicals[i], i));
    auto s = settings();
    std::string selector = options.selector.empty() ? s->device : options.selector;
    size_t index = choose_device(infos, selector);
    uint32_t disabled = options.disabled;
    if (!s->disable.empty()) disabled |= parse_capability_mask(s->disable);
    auto core = std::make_shared<DeviceCore>(instance, std::move(physicals[index]), infos[index], disabled,
                                             options.heap_limit, options.max_chunk_bytes);
    return std::make_unique<DeviceImpl>(core);
  });
}

std::shared_ptr<Device> Device::open(const DeviceOptions& options) {
  check_cache_directory();
  return std::shared_ptr<Device>(new Device(make_impl(options)));
}

Device::Device(std::unique_ptr<DeviceImpl> impl) : impl_(std::move(impl)) {}
Device::~Device() = default;

const DeviceInfo& Device::info() const { return impl_->core->info(); }
bool Device::has(Capability c) const { return impl_->core->has(c); }
MemoryStats Device::memory_stats() const { return impl_->core->memory_stats(); }
KernelCacheStats Device::kernel_cache_stats() const { return impl_->kernels.stats(); }
StreamStatistics Device::stream_stats() const {
  StreamStats s = impl_->stream.stats();
  return {s.submits, s.commands, s.barriers, s.waits};
}
std::vector<KernelTime> Device::kernel_profile() { return impl_->stream.kernel_profile(); }
void Device::save_pipeline_cache() { impl_->kernels.save_pipeline_cache(); }
void Device::fail_submission(uint64_t n, bool lose_device) {
  impl_->stream.fail_submission(n, lose_device ? vk::Result::eErrorDeviceLost : vk::Result::eErrorOutOfDeviceMemory);
}

bool Device::lost() const { return impl_->core->lost(); }
void Device::reset_peak_memory() { impl_->core->reset_peak(); }
void Device::set_memory_limit(uint64_t bytes) { impl_->core->set_memory_limit(bytes); }
void Device::clear_buffer_cache() { impl_->core->buffer_cache().clear(); }
void Device::synchronize() { impl_->stream.synchronize(); }

std::shared_ptr<Buffer> DeviceImpl::allocate(uint64_t bytes, BufferKind kind, bool stream_ordered) {
  // Large buffers the cache cannot serve take the memory of a dropped tensor that queued work
  // still holds, in stream order, before asking the driver (DeviceProfile::stream_reuse).
  if (kind == BufferKind::Device) {
    try {
      core->check_memory_limit(bytes);
    } catch (const Error&) {
      // Tensors dropped while in-flight batches still hold their buffers count until those finish.
      stream.synchronize();
      core->check_memory_limit(bytes);
    }
  }
  bool reuse = core->profile().stream_reuse;
  constexpr uint64_t kReuseMinBytes = 1 << 20;
  uint64_t class_bytes = BufferCache::size_class(bytes);
  if (reuse && stream_ordered && kind == BufferKind::Device && class_bytes >= kReuseMinBytes && !core->buffer_cache().has(class_bytes)) {
    if (auto r = stream.reclaim_dropped(class_bytes)) {
      auto buffer = std::make_shared<Buffer>(core, bytes, class_bytes, std::move(r->chunks));
      buffer->last_write_batch = r->after_batch;
      buffer->last_write_epoch = r->after_epoch;
      return buffer;
    }
  }
  try {
    return std::make_shared<Buffer>(core, bytes, kind);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) throw;
    // Buffers dropped by tensors may still be held by in-flight batches: let them finish.
    stream.synchronize();
    return std::make_shared<Buffer>(core, bytes, kind);
  }
}

}  // namespace nxv
