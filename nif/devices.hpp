// Logical devices, opened lazily and cached per physical-device index for the life of the VM.
#pragma once
#include <cstdint>
#include <memory>

#include "nxv/device.hpp"

namespace nxv_nif {

// The device at `index` (Device::open({selector: "<index>"})), opened on first use.
// Throws nxv::Error for an index with no device.
std::shared_ptr<nxv::Device> device_at(int64_t index);
// The device at `index` if it is open already, else nullptr; never blocks on a device open.
std::shared_ptr<nxv::Device> device_if_open(int64_t index);

// Opens the device at `index` anew and makes it the one `device_at` returns (after device
// loss). Tensors of the previous logical device keep it alive and raise DeviceLost when used.
std::shared_ptr<nxv::Device> reopen_device(int64_t index);

// The default device: Device::open({}) (NX_VULKAN_DEVICE aware, else the best device),
// cached under its own index so that `device_at(default_device_index())` is the same device.
int64_t default_device_index();

}  // namespace nxv_nif
