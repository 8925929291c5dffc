// Engine work that may compile kernels runs on threads of the NIF's own with a full-size
// stack: glslang recurses deeply on large templates, deeper than a dirty scheduler's stack
// (320 KiB by default) allows. The threads are kept for the process, so that a blocking call
// pays a hand-over, not a thread's creation.
#pragma once
#include <functional>

namespace nxv_nif {

// Runs `work` on such a thread and waits for it; its exception is rethrown here.
void on_big_stack(const std::function<void()>& work);

}  // namespace nxv_nif
