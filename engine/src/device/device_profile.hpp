// What the engine decides once per device when it opens: the kind of driver, its quirks as
// named booleans, and the submission and caching policies (defaults that the settings'
// overrides replace). Strategies read these, never the device's type as text.
#pragma once
#include <chrono>
#include <cstdint>

#include "nxv/device.hpp"

namespace nxv {

struct Settings;

struct DeviceProfile {
  // A CPU implementation (lavapipe, SwiftShader): "device memory" is the host's, kernels are
  // compiled by the driver's own LLVM, and launches cost tens of microseconds.
  bool cpu_driver = false;
  // NVIDIA's driver (580) can leave a submission unfinished forever when a pipeline is created
  // meanwhile: pipeline creation and queue submission are kept apart.
  bool submit_exclusion = false;
  // How long a batch recorded on an idle GPU waits for more ops before it is submitted. None on
  // CPU drivers, where the deferral's timer thread, woken for nearly every small op, competes
  // with the driver's own queue thread for the cores.
  std::chrono::microseconds submit_defer{50};
  // A dropped tensor's memory that queued work still uses goes to the next allocation of its
  // size, in stream order.
  bool stream_reuse = true;
  // shaderc optimises SPIR-V (CPU drivers optimise it themselves with LLVM: spirv-opt was
  // most of shaderc's time there).
  bool spirv_optimize = true;
  // How long a wait for the device polls before it sleeps: on CPU drivers small work ends in
  // microseconds, and waking a sleeping thread costs tens of them.
  std::chrono::microseconds wait_spin{0};
  // Quiet time after the last pipeline creation before the pipeline cache is saved.
  std::chrono::milliseconds pipeline_save_quiet{500};

  static DeviceProfile of(const DeviceInfo& info, const Settings& settings);
};

}  // namespace nxv

namespace nxv {

// Whether kernel choices take a CPU driver's paths: on CPU drivers, unless the calling thread's
// tuning asks for a GPU's (Tuning::gpu_paths, tests).
bool cpu_paths(const DeviceProfile& profile);

}  // namespace nxv
