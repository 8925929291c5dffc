// Splitting elementwise-shaped work into dispatches: dense ranges that stay inside one buffer
// chunk, and strided views collapsed to at most kMaxRank axes.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "device/device_impl.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

inline constexpr int kMaxRank = 6;
inline constexpr uint64_t kMaxDispatchElements = 1ull << 30;

// Push constants of the elementwise-shaped kernels (must match elementwise.comp).
struct ElementwisePush {
  uint64_t out_addr = 0, a_addr = 0, b_addr = 0;
  uint32_t n = 0, rank = 0, start = 0, dense = 0;
  uint32_t shape[kMaxRank] = {};
  uint32_t a_stride[kMaxRank] = {};
  uint32_t b_stride[kMaxRank] = {};
};
static_assert(sizeof(ElementwisePush) <= 128);

// Three inputs (select, clip): one more address and stride set fit in 128 bytes with at most
// kMaxRank3 collapsed axes per dispatch (higher ranks are split into more dispatches).
inline constexpr int kMaxRank3 = 4;
struct Elementwise3Push {
  uint64_t out_addr = 0, addr[3] = {};
  uint32_t n = 0, rank = 0, start = 0, dense = 0;
  uint32_t shape[kMaxRank3] = {};
  uint32_t stride[3][kMaxRank3] = {};
};
static_assert(sizeof(Elementwise3Push) <= 128);

// One operand as the kernel reads it: a view already broadcast to the output shape.
struct Operand {
  const Tensor* view;
};

// How the work will run: dense (every input is the output's shape and contiguous, or a single
// element) or strided.
bool all_dense(const std::vector<Tensor>& views);

// Calls `emit` for each dispatch of `out` (contiguous) with inputs `views` (broadcast to out's
// shape), filling addresses, counts, ranks and strides. Throws Unsupported when a strided view
// cannot be addressed with 32-bit element offsets inside one chunk.
void plan_elementwise(const Tensor& out, const std::vector<Tensor>& views, bool dense,
                      const std::function<void(ElementwisePush&)>& emit);

// The same for three inputs.
void plan_elementwise3(const Tensor& out, const std::vector<Tensor>& views, bool dense,
                       const std::function<void(Elementwise3Push&)>& emit);

// Number of workgroups for `n` elements with grid-stride loops, at most `max_workgroups` when
// that is not 0 (a kernel's own cap, Kernel::max_workgroups).
uint32_t workgroups_for(const DeviceCore& core, uint64_t n, uint32_t workgroup_size, uint32_t max_workgroups = 0);

}  // namespace nxv
