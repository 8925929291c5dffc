// NX_VULKAN_CRASH_TRACE=1: a fatal signal in the VM prints the crashing thread's name and
// stack to stderr before the default action (diagnosis of crashes where no debugger runs).
#pragma once

namespace nxv_nif {

void install_crash_trace_if_asked();

}  // namespace nxv_nif
