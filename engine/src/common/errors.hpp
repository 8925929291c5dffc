// Turning Vulkan failures into nxv::Error with their cause kept.
#pragma once
#include <string>

#include "common/vk.hpp"
#include "nxv/error.hpp"

namespace nxv {

ErrorKind error_kind_for(vk::Result result);

// Throws nxv::Error naming `what` and the VkResult.
[[noreturn]] void throw_vk(vk::Result result, const std::string& what);

inline void check_vk(VkResult result, const char* what) {
  if (result != VK_SUCCESS) throw_vk(static_cast<vk::Result>(result), what);
}

// Runs `f`, translating vk::SystemError (Vulkan-Hpp) into nxv::Error.
template <class F>
decltype(auto) translate_vk(const char* what, F&& f) {
  try {
    return f();
  } catch (const vk::SystemError& e) {
    throw_vk(static_cast<vk::Result>(e.code().value()), std::string(what) + ": " + e.what());
  }
}

}  // namespace nxv
