#include "device/instance.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>

#include "common/errors.hpp"
#include "common/leak_check.hpp"
#include "common/settings.hpp"
#include "nxv/diagnostics.hpp"

namespace nxv {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::atomic<uint64_t> g_message_count{0};
std::mutex g_messages_mutex;
std::deque<std::string> g_messages;

VKAPI_ATTR vk::Bool32 VKAPI_CALL on_debug_message(vk::DebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  vk::DebugUtilsMessageTypeFlagsEXT,
                                                  const vk::DebugUtilsMessengerCallbackDataEXT* data, void*) {
  // Info/verbose chatter is not a finding; warnings and errors are.
  if (severity < vk::DebugUtilsMessageSeverityFlagBitsEXT::eWarning) return VK_FALSE;
  g_message_count.fetch_add(1);
  std::string text = data && data->pMessage ? data->pMessage : "(no message)";
  {
    std::lock_guard lock(g_messages_mutex);
    g_messages.push_back(text);
    if (g_messages.size() > 64) g_messages.pop_front();
  }
  if (settings()->validation_print) std::cerr << "[nx_vulkan validation] " << text << "\n";
  return VK_FALSE;
}

}  // namespace

bool validation_enabled() { return settings()->validation; }

uint64_t validation_message_count() { return g_message_count.load(); }
std::vector<std::string> validation_messages() {
  std::lock_guard lock(g_messages_mutex);
  return {g_messages.begin(), g_messages.end()};
}
void clear_validation_messages() {
  std::lock_guard lock(g_messages_mutex);
  g_messages.clear();
  g_message_count.store(0);
}

std::shared_ptr<Instance> Instance::get() {
  static std::mutex mutex;
  static std::weak_ptr<Instance> current;
  std::lock_guard lock(mutex);
  if (auto existing = current.lock()) return existing;
  auto created = std::shared_ptr<Instance>(new Instance());
  current = created;
  return created;
}

Instance::Instance() {
  [[maybe_unused]] LoaderScope loading;  // layers and drivers load (and some unload) in here
  try {
    context_.emplace();  // opens libvulkan.so.1
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Unsupported,
                std::string("the Vulkan loader (libvulkan.so.1) could not be opened (") + e.what() +
                    "): install it (Debian/Ubuntu: libvulkan1; Fedora: vulkan-loader; Arch: vulkan-icd-loader; "
                    "FreeBSD: vulkan-loader) with a driver, or Mesa's lavapipe (mesa-vulkan-drivers) for the CPU");
  }
  translate_vk("creating the Vulkan instance", [&] {
    uint32_t loader_version = context_->enumerateInstanceVersion();
    if (loader_version < VK_API_VERSION_1_3)
      throw Error(ErrorKind::Unsupported,
                  "the Vulkan loader supports only API " +
                      std::to_string(VK_API_VERSION_MAJOR(loader_version)) + "." +
                      std::to_string(VK_API_VERSION_MINOR(loader_version)) + "; 1.3 is required");
    api_version_ = loader_version >= VK_API_VERSION_1_4 ? VK_API_VERSION_1_4 : VK_API_VERSION_1_3;

    std::vector<const char*> layers;
    std::vector<const char*> extensions;
    validation_ = validation_enabled();
    if (validation_) {
      bool have_layer = false;
      for (const auto& l : context_->enumerateInstanceLayerProperties())
        if (std::strcmp(l.layerName, kValidationLayer) == 0) have_layer = true;
      if (!have_layer)
        throw Error(ErrorKind::Unsupported,
                    "NX_VULKAN_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed "
                    "(Debian: vulkan-validationlayers)");
      layers.push_back(kValidationLayer);
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    for (const auto& e : context_->enumerateInstanceExtensionProperties())
      if (std::strcmp(e.extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0)
        extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);  // MoltenVK

    vk::ApplicationInfo app{.pApplicationName = "nx_vulkan",
                            .applicationVersion = 1,
                            .pEngineName = "nxv",
                            .engineVersion = 1,
                            .apiVersion = api_version_};
    vk::InstanceCreateInfo info{.pApplicationInfo = &app,
                                .enabledLayerCount = static_cast<uint32_t>(layers.size()),
                                .ppEnabledLayerNames = layers.data(),
                                .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
                                .ppEnabledExtensionNames = extensions.data()};
    for (const char* e : extensions)
      if (std::strcmp(e, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0)
        info.flags |= vk::InstanceCreateFlagBits::eEnumeratePortabilityKHR;
    {
      // Drivers read their environment when they first enumerate their devices.
      ScopedDriverEnvironment driver_environment;
      instance_.emplace(*context_, info);
      (void)instance_->enumeratePhysicalDevices();
    }

    if (validation_) {
      vk::DebugUtilsMessengerCreateInfoEXT m{
          .messageSeverity = vk::DebugUtilsMessageSeverityFlagBitsEXT::eWarning |
                             vk::DebugUtilsMessageSeverityFlagBitsEXT::eError,
          .messageType = vk::DebugUtilsMessageTypeFlagBitsEXT::eGeneral |
                         vk::DebugUtilsMessageTypeFlagBitsEXT::eValidation |
                         vk::DebugUtilsMessageTypeFlagBitsEXT::ePerformance,
          .pfnUserCallback = &on_debug_message};
      messenger_.emplace(*instance_, m);
    }
  });
}

}  // namespace nxv
