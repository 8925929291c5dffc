#include "device/device_profile.hpp"

#include "common/settings.hpp"
#include "common/tuning.hpp"

namespace nxv {

DeviceProfile DeviceProfile::of(const DeviceInfo& info, const Settings& s) {
  constexpr uint32_t kNvidia = 0x10DE;
  DeviceProfile p;
  p.cpu_driver = info.type == "cpu";
  p.submit_exclusion = s.submit_exclusion.value_or(info.vendor_id == kNvidia);
  p.submit_defer = std::chrono::microseconds(s.submit_defer_us.value_or(p.cpu_driver ? 0 : 50));
  p.stream_reuse = s.stream_reuse.value_or(true);
  p.spirv_optimize = s.spirv_optimize.value_or(!p.cpu_driver);
  p.wait_spin = std::chrono::microseconds(s.wait_spin_us.value_or(p.cpu_driver ? 100 : 0));
  if (s.pipeline_save_ms) p.pipeline_save_quiet = std::chrono::milliseconds(*s.pipeline_save_ms);
  return p;
}

}  // namespace nxv

namespace nxv {

bool cpu_paths(const DeviceProfile& profile) { return profile.cpu_driver && !tuning().gpu_paths; }

}  // namespace nxv
