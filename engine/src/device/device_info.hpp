// Reading a physical device's identity, limits and features into nxv::DeviceInfo.
#pragma once
#include <string>
#include <vector>

#include "common/vk.hpp"
#include "nxv/device.hpp"

namespace nxv {

DeviceInfo read_device_info(const vk::raii::PhysicalDevice& physical, uint32_t index);
bool has_extension(const vk::raii::PhysicalDevice& physical, const char* name);

// Ranking for the default choice: discrete > integrated > virtual > cpu > other.
int device_type_rank(const std::string& type);

}  // namespace nxv
