#include "devices.hpp"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "nxv/error.hpp"

namespace nxv_nif {

namespace {

constexpr int64_t kFastIndices = 64;

struct Cache {
  std::mutex mutex;
  std::map<int64_t, std::shared_ptr<nxv::Device>> devices;
  std::optional<int64_t> default_index;
  // Lock-free lookups of open devices (entries of `devices`, which never go away).
  std::array<std::atomic<const std::shared_ptr<nxv::Device>*>, kFastIndices> open{};
};

// Deliberately leaked: tensors still referenced when the VM halts must never see their device
// torn down by static destructors.
Cache& cache() {
  static Cache* instance = new Cache();
  return *instance;
}

}  // namespace

std::shared_ptr<nxv::Device> device_at(int64_t index) {
  if (index < 0) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "device index must be >= 0");
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.devices.find(index);
  if (it != c.devices.end()) return it->second;
  nxv::DeviceOptions options;
  options.selector = std::to_string(index);
  auto device = nxv::Device::open(options);
  auto [entry, _] = c.devices.emplace(index, device);
  if (index < kFastIndices) c.open[size_t(index)].store(&entry->second, std::memory_order_release);
  return device;
}

std::shared_ptr<nxv::Device> device_if_open(int64_t index) {
  if (index < 0 || index >= kFastIndices) return nullptr;
  const auto* entry = cache().open[size_t(index)].load(std::memory_order_acquire);
  return entry ? *entry : nullptr;
}

int64_t default_device_index() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.default_index) return *c.default_index;
  auto device = nxv::Device::open({});
  int64_t index = device->info().index;
  // If that physical device was already opened by index, keep the first logical device:
  // tensors of one index must all live on one logical device.
  auto [entry, _] = c.devices.emplace(index, device);
  if (index >= 0 && index < kFastIndices) c.open[size_t(index)].store(&entry->second, std::memory_order_release);
  c.default_index = index;
  return index;
}

}  // namespace nxv_nif
