// The process-wide Vulkan instance (loader, validation layer, debug messenger).
#pragma once
#include <memory>
#include <optional>

#include "common/vk.hpp"

namespace nxv {

class Instance {
 public:
  // Created on first use; lives while any device or the registry holds it.
  static std::shared_ptr<Instance> get();

  vk::raii::Context& context() { return *context_; }
  vk::raii::Instance& instance() { return *instance_; }
  uint32_t api_version() const { return api_version_; }
  bool validation() const { return validation_; }

 private:
  Instance();
  std::optional<vk::raii::Context> context_;  // the loader, opened in the constructor
  std::optional<vk::raii::Instance> instance_;
  std::optional<vk::raii::DebugUtilsMessengerEXT> messenger_;
  uint32_t api_version_ = VK_API_VERSION_1_3;
  bool validation_ = false;
};

}  // namespace nxv
