// The one translation unit that compiles Vulkan Memory Allocator. Vulkan functions come from
// the loader at run time (VmaVulkanFunctions), so the engine needs no link-time libvulkan.
#define VMA_IMPLEMENTATION
#define VMA_STATIC_VULKAN_FUNCTIONS 0
#define VMA_DYNAMIC_VULKAN_FUNCTIONS 1
#include <vk_mem_alloc.h>
