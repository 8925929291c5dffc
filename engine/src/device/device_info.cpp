#include "device/device_info.hpp"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace nxv {
namespace {

std::string type_name(vk::PhysicalDeviceType t) {
  switch (t) {
    case vk::PhysicalDeviceType::eDiscreteGpu: return "discrete";
    case vk::PhysicalDeviceType::eIntegratedGpu: return "integrated";
    case vk::PhysicalDeviceType::eVirtualGpu: return "virtual";
    case vk::PhysicalDeviceType::eCpu: return "cpu";
    default: return "other";
  }
}

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE: return "nvidia";
    case 0x1002: return "amd";
    case 0x8086: return "intel";
    case 0x106B: return "apple";
    case 0x13B5: return "arm";
    case 0x5143: return "qualcomm";
    case 0x10005: return "mesa";
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", id);
  return buf;
}

std::string component_name(vk::ComponentTypeKHR t) {
  switch (t) {
    case vk::ComponentTypeKHR::eFloat16: return "f16";
    case vk::ComponentTypeKHR::eFloat32: return "f32";
    case vk::ComponentTypeKHR::eFloat64: return "f64";
    case vk::ComponentTypeKHR::eSint8: return "s8";
    case vk::ComponentTypeKHR::eSint16: return "s16";
    case vk::ComponentTypeKHR::eSint32: return "s32";
    case vk::ComponentTypeKHR::eSint64: return "s64";
    case vk::ComponentTypeKHR::eUint8: return "u8";
    case vk::ComponentTypeKHR::eUint16: return "u16";
    case vk::ComponentTypeKHR::eUint32: return "u32";
    case vk::ComponentTypeKHR::eUint64: return "u64";
    default:
      // VK_COMPONENT_TYPE_BFLOAT16_KHR by its registry value: headers before 1.4.311 lack it,
      // and drivers report bf16 shapes all the same.
      if (static_cast<int>(t) == 1000141000) return "bf16";
      return "other(" + std::to_string(static_cast<int>(t)) + ")";
  }
}

std::string hex_uuid(const uint8_t* bytes) {
  std::string out;
  char buf[3];
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

}  // namespace

bool has_extension(const vk::raii::PhysicalDevice& physical, const char* name) {
  for (const auto& e : physical.enumerateDeviceExtensionProperties())
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

OptionalExtensions listed_extensions(const vk::raii::PhysicalDevice& physical) {
  OptionalExtensions e;
  for (const auto& p : physical.enumerateDeviceExtensionProperties()) {
    std::string_view name = p.extensionName;
    if (name == VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) e.cooperative_matrix = true;
    if (name == kBfloat16ExtensionName) e.bfloat16 = true;
    if (name == VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME) e.conditional_rendering = true;
#ifdef VK_NV_cooperative_matrix2
    if (name == VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME) e.cooperative_matrix2 = true;
#endif
  }
  e.cooperative_matrix2 = e.cooperative_matrix2 && e.cooperative_matrix;  // it extends the KHR one
  return e;
}

std::vector<const char*> extension_names(const OptionalExtensions& e) {
  std::vector<const char*> names;
  if (e.cooperative_matrix) names.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (e.bfloat16) names.push_back(kBfloat16ExtensionName);
  if (e.conditional_rendering) names.push_back(VK_EXT_CONDITIONAL_RENDERING_EXTENSION_NAME);
#ifdef VK_NV_cooperative_matrix2
  if (e.cooperative_matrix2) names.push_back(VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
#endif
  return names;
}

FeatureChain::FeatureChain(const OptionalExtensions& c) : chained(c) {
  void** tail = &f2.pNext;
  auto link = [&](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  link(f11);
  link(f12);
  link(f13);
  if (c.cooperative_matrix) link(coopmat);
  if (c.bfloat16) link(bf16);
  if (c.conditional_rendering) link(conditional);
#ifdef VK_NV_cooperative_matrix2
  if (c.cooperative_matrix2) link(coopmat2);
#endif
  *tail = nullptr;
}

bool FeatureChain::any_coopmat2() const {
#ifdef VK_NV_cooperative_matrix2
  const auto& f = coopmat2;
  return chained.cooperative_matrix2 &&
         (f.cooperativeMatrixWorkgroupScope || f.cooperativeMatrixFlexibleDimensions || f.cooperativeMatrixReductions ||
          f.cooperativeMatrixConversions || f.cooperativeMatrixPerElementOperations ||
          f.cooperativeMatrixTensorAddressing || f.cooperativeMatrixBlockLoads);
#else
  return false;
#endif
}

void query_features(const vk::raii::PhysicalDevice& physical, FeatureChain& chain) {
  // The raw call: vk::raii's getFeatures2<...> takes a fixed chain, ours depends on the device.
  physical.getDispatcher()->vkGetPhysicalDeviceFeatures2(static_cast<VkPhysicalDevice>(*physical),
                                                         reinterpret_cast<VkPhysicalDeviceFeatures2*>(&chain.f2));
}

int device_type_rank(const std::string& type) {
  if (type == "discrete") return 0;
  if (type == "integrated") return 1;
  if (type == "virtual") return 2;
  if (type == "cpu") return 3;
  return 4;
}

namespace {

CooperativeMatrix2Info read_coopmat2(const vk::raii::PhysicalDevice& physical, const FeatureChain& feats) {
  CooperativeMatrix2Info c;
#ifdef VK_NV_cooperative_matrix2
  c.workgroup_scope = feats.coopmat2.cooperativeMatrixWorkgroupScope;
  c.flexible_dimensions = feats.coopmat2.cooperativeMatrixFlexibleDimensions;
  c.tensor_addressing = feats.coopmat2.cooperativeMatrixTensorAddressing;
  auto props = physical.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceCooperativeMatrix2PropertiesNV>();
  const auto& p = props.get<vk::PhysicalDeviceCooperativeMatrix2PropertiesNV>();
  c.max_workgroup_size = p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  c.max_dimension = p.cooperativeMatrixFlexibleDimensionsMaxDimension;
  c.reserved_shared_memory = p.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
  if (c.flexible_dimensions) {
    try {
      for (const auto& f : physical.getCooperativeMatrixFlexibleDimensionsPropertiesNV()) {
        FlexibleMatrixShape s;
        s.m = f.MGranularity, s.n = f.NGranularity, s.k = f.KGranularity;
        s.a_type = component_name(f.AType), s.b_type = component_name(f.BType);
        s.c_type = component_name(f.CType), s.result_type = component_name(f.ResultType);
        s.scope = f.scope == vk::ScopeKHR::eWorkgroup ? "workgroup" : f.scope == vk::ScopeKHR::eSubgroup ? "subgroup" : "other";
        s.workgroup_invocations = f.workgroupInvocations;
        if (!f.saturatingAccumulation) c.flexible_shapes.push_back(s);
      }
    } catch (const vk::SystemError&) {
      // No flexible shapes reported: the workgroup-scope GEMM is not offered.
    }
  }
#else
  (void)physical, (void)feats;
#endif
  return c;
}

}  // namespace

DeviceInfo read_device_info(const vk::raii::PhysicalDevice& physical, uint32_t index) {
  DeviceInfo info;
  info.index = index;

  auto props = physical.getProperties2<vk::PhysicalDeviceProperties2, vk::PhysicalDeviceVulkan11Properties,
                                       vk::PhysicalDeviceVulkan12Properties,
                                       vk::PhysicalDeviceVulkan13Properties>();
  const auto& p = props.get<vk::PhysicalDeviceProperties2>().properties;
  const auto& p11 = props.get<vk::PhysicalDeviceVulkan11Properties>();
  const auto& p12 = props.get<vk::PhysicalDeviceVulkan12Properties>();
  const auto& p13 = props.get<vk::PhysicalDeviceVulkan13Properties>();

  info.name = p.deviceName.data();
  info.type = type_name(p.deviceType);
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  info.vendor = vendor_name(p.vendorID);
  info.driver_name = p12.driverName.data();
  info.driver_info = p12.driverInfo.data();
  info.api_version = std::to_string(VK_API_VERSION_MAJOR(p.apiVersion)) + "." +
                     std::to_string(VK_API_VERSION_MINOR(p.apiVersion)) + "." +
                     std::to_string(VK_API_VERSION_PATCH(p.apiVersion));
  info.uuid = hex_uuid(p11.deviceUUID.data());
  info.subgroup_size = p11.subgroupSize;
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[i] = p.limits.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[i] = p.limits.maxComputeWorkGroupCount[i];
  }
  info.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  info.max_shared_memory = p.limits.maxComputeSharedMemorySize;
  info.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  info.max_allocation_size = p11.maxMemoryAllocationSize;
  info.max_buffer_size = p13.maxBufferSize;
  info.max_push_constants = p.limits.maxPushConstantsSize;

  auto mem = physical.getMemoryProperties();
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    info.heaps.push_back({mem.memoryHeaps[i].size,
                          bool(mem.memoryHeaps[i].flags & vk::MemoryHeapFlagBits::eDeviceLocal)});

  const auto listed = listed_extensions(physical);
  FeatureChain feats(listed);
  query_features(physical, feats);
  const auto& f = feats.f2.features;
  const auto& f11 = feats.f11;
  const auto& f12 = feats.f12;
  auto& ft = info.features;
  ft.float16 = f12.shaderFloat16;
  ft.float64 = f.shaderFloat64;
  ft.int64 = f.shaderInt64;
  ft.int16 = f.shaderInt16;
  ft.int8 = f12.shaderInt8;
  ft.storage8 = f12.storageBuffer8BitAccess;
  ft.storage16 = f11.storageBuffer16BitAccess;
  ft.buffer_device_address = f12.bufferDeviceAddress;
  ft.timeline_semaphore = f12.timelineSemaphore;
  ft.bfloat16 = listed.bfloat16 && feats.bf16.shaderBFloat16Type;
  ft.bfloat16_cooperative_matrix = ft.bfloat16 && feats.bf16.shaderBFloat16CooperativeMatrix;
  ft.conditional_rendering = listed.conditional_rendering && feats.conditional.conditionalRendering;
  auto ops = p11.subgroupSupportedOperations;
  bool compute_stage = bool(p11.subgroupSupportedStages & vk::ShaderStageFlagBits::eCompute);
  ft.subgroup_basic = compute_stage && bool(ops & vk::SubgroupFeatureFlagBits::eBasic);
  ft.subgroup_arithmetic = compute_stage && bool(ops & vk::SubgroupFeatureFlagBits::eArithmetic);
  ft.subgroup_shuffle = compute_stage && bool(ops & vk::SubgroupFeatureFlagBits::eShuffle);
  ft.subgroup_ballot = compute_stage && bool(ops & vk::SubgroupFeatureFlagBits::eBallot);

  info.min_subgroup_size = p13.minSubgroupSize;
  info.max_subgroup_size = p13.maxSubgroupSize;
  info.max_compute_workgroup_subgroups = p13.maxComputeWorkgroupSubgroups;
  info.required_subgroup_size_stages = static_cast<uint32_t>(p13.requiredSubgroupSizeStages);
  // Only a stage in requiredSubgroupSizeStages may ask for a subgroup size.
  ft.subgroup_size_control = feats.f13.subgroupSizeControl &&
                             bool(p13.requiredSubgroupSizeStages & vk::ShaderStageFlagBits::eCompute);
  ft.compute_full_subgroups = feats.f13.computeFullSubgroups;

  if (listed.cooperative_matrix && feats.coopmat.cooperativeMatrix) {
    auto cprops = physical.getProperties2<vk::PhysicalDeviceProperties2,
                                          vk::PhysicalDeviceCooperativeMatrixPropertiesKHR>();
    bool in_compute = bool(cprops.get<vk::PhysicalDeviceCooperativeMatrixPropertiesKHR>().cooperativeMatrixSupportedStages &
                           vk::ShaderStageFlagBits::eCompute);
    try {
      for (const auto& c : physical.getCooperativeMatrixPropertiesKHR()) {
        info.cooperative_matrix_shapes.push_back(
            {c.MSize, c.NSize, c.KSize, component_name(c.AType), component_name(c.BType),
             component_name(c.CType), component_name(c.ResultType),
             c.scope == vk::ScopeKHR::eSubgroup    ? "subgroup"
             : c.scope == vk::ScopeKHR::eWorkgroup ? "workgroup"
                                                   : "other"});
      }
    } catch (const vk::SystemError&) {
      // A driver that lists the extension but cannot report shapes offers none we can use.
    }
    ft.cooperative_matrix = in_compute && !info.cooperative_matrix_shapes.empty();
    if (!ft.cooperative_matrix) info.cooperative_matrix_shapes.clear();
    ft.cooperative_matrix2 = ft.cooperative_matrix && feats.any_coopmat2();
    if (ft.cooperative_matrix2) info.cooperative_matrix2 = read_coopmat2(physical, feats);
  }
  return info;
}

}  // namespace nxv
