// Leak checking around the Vulkan loader. While an instance is created the loader loads
// layers and drivers, some of which allocate in one-time initialisations and are unloaded
// again before the process exits; LeakSanitizer then sees those allocations with a stack cut
// at the unloaded module, which no suppression can name. Sanitizer builds exempt the
// allocations made on this thread inside a LoaderScope; everything else is still checked.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define NXV_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NXV_LEAK_CHECKED 1
#endif
#endif

#ifdef NXV_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace nxv {

class LoaderScope {
 public:
#ifdef NXV_LEAK_CHECKED
  LoaderScope() { __lsan_disable(); }
  ~LoaderScope() { __lsan_enable(); }
#else
  LoaderScope() = default;
#endif
  LoaderScope(const LoaderScope&) = delete;
  LoaderScope& operator=(const LoaderScope&) = delete;
};

}  // namespace nxv
