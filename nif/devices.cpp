#include "devices.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "nxv/error.hpp"

namespace nxv_nif {

namespace {

struct Cache {
  std::mutex mutex;
  std::map<int64_t, std::shared_ptr<nxv::Device>> devices;
  std::optional<int64_t> default_index;
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
  c.devices.emplace(index, device);
  return device;
}

int64_t default_device_index() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.default_index) return *c.default_index;
  auto device = nxv::Device::open({});
  int64_t index = device->info().index;
  // If that physical device was already opened by index, keep the first logical device:
  // tensors of one index must all live on one logical device.
  c.devices.emplace(index, device);
  c.default_index = index;
  return index;
}

}  // namespace nxv_nif
