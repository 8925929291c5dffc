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
  // Lock-free lookups of open devices (copies of `devices`' entries).
  std::array<std::atomic<std::shared_ptr<nxv::Device>>, kFastIndices> open{};
};

// Deliberately leaked: tensors still referenced when the VM halts must never see their device
// torn down by static destructors.
Cache& cache() {
  static Cache* instance = new Cache();
  return *instance;
}

void publish_locked(Cache& c, int64_t index, const std::shared_ptr<nxv::Device>& device) {
  c.devices[index] = device;
  if (index >= 0 && index < kFastIndices) c.open[size_t(index)].store(device, std::memory_order_release);
}

std::shared_ptr<nxv::Device> open_index(int64_t index) {
  nxv::DeviceOptions options;
  options.selector = std::to_string(index);
  return nxv::Device::open(options);
}

}  // namespace

std::shared_ptr<nxv::Device> device_at(int64_t index) {
  if (index < 0) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "device index must be >= 0");
  if (auto device = device_if_open(index)) return device;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.devices.find(index);
  if (it != c.devices.end()) return it->second;
  auto device = open_index(index);
  publish_locked(c, index, device);
  return device;
}

std::shared_ptr<nxv::Device> device_if_open(int64_t index) {
  if (index < 0 || index >= kFastIndices) return nullptr;
  return cache().open[size_t(index)].load(std::memory_order_acquire);
}

int64_t default_device_index() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.default_index) return *c.default_index;
  auto device = nxv::Device::open({});
  int64_t index = device->info().index;
  // If that physical device was already opened by index, keep the first logical device:
  // tensors of one index must all live on one logical device.
  if (!c.devices.contains(index)) publish_locked(c, index, device);
  c.default_index = index;
  return index;
}

std::shared_ptr<nxv::Device> reopen_device(int64_t index) {
  if (index < 0) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "device index must be >= 0");
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto device = open_index(index);
  publish_locked(c, index, device);
  return device;
}

}  // namespace nxv_nif
