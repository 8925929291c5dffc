// Reading a physical device's identity, limits and features into nxv::DeviceInfo, and the
// feature-structure chain shared by the query (read_device_info) and the enable (DeviceCore).
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

// VK_KHR_shader_bfloat16's name and feature structure. Headers before 1.4.311 lack them (the
// distribution's 1.4.309 among them); the structure is then declared here with the registry's
// layout and structure type (1000141000), so drivers that offer bf16 still get it enabled.
#ifdef VK_KHR_shader_bfloat16
using ShaderBfloat16Features = vk::PhysicalDeviceShaderBfloat16FeaturesKHR;
inline constexpr const char* kBfloat16ExtensionName = VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME;
#else
struct ShaderBfloat16Features {
  VkStructureType sType = static_cast<VkStructureType>(1000141000);
  void* pNext = nullptr;
  VkBool32 shaderBFloat16Type = VK_FALSE;
  VkBool32 shaderBFloat16DotProduct = VK_FALSE;
  VkBool32 shaderBFloat16CooperativeMatrix = VK_FALSE;
};
inline constexpr const char* kBfloat16ExtensionName = "VK_KHR_shader_bfloat16";
#endif

// Device extensions the engine enables where present.
struct OptionalExtensions {
  bool cooperative_matrix = false;   // VK_KHR_cooperative_matrix
  bool bfloat16 = false;             // VK_KHR_shader_bfloat16
  bool cooperative_matrix2 = false;  // VK_NV_cooperative_matrix2 (needs the KHR one)
  bool conditional_rendering = false;  // VK_EXT_conditional_rendering
};
OptionalExtensions listed_extensions(const vk::raii::PhysicalDevice& physical);
// The names of the extensions in `e`, for VkDeviceCreateInfo.
std::vector<const char*> extension_names(const OptionalExtensions& e);

// VkPhysicalDeviceFeatures2 with the core 1.1-1.3 structures and, linked only for the extensions
// in `chained`, theirs (a structure of an extension that is not listed, or not enabled, must not
// be in the chain). Not copyable: the pNext links point into the object.
struct FeatureChain {
  explicit FeatureChain(const OptionalExtensions& chained);
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;

  const OptionalExtensions chained;
  vk::PhysicalDeviceFeatures2 f2{};
  vk::PhysicalDeviceVulkan11Features f11{};
  vk::PhysicalDeviceVulkan12Features f12{};
  vk::PhysicalDeviceVulkan13Features f13{};
  vk::PhysicalDeviceCooperativeMatrixFeaturesKHR coopmat{};
  ShaderBfloat16Features bf16{};
  vk::PhysicalDeviceConditionalRenderingFeaturesEXT conditional{};
#ifdef VK_NV_cooperative_matrix2
  vk::PhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2{};
#endif

  // Whether the chained VK_NV_cooperative_matrix2 structure has any feature set.
  bool any_coopmat2() const;
};
// Fills `chain` with what the device supports (vkGetPhysicalDeviceFeatures2).
void query_features(const vk::raii::PhysicalDevice& physical, FeatureChain& chain);

}  // namespace nxv
