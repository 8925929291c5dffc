// Kernel launches as data: what an op family's lowering produces and a graph executable
// replays. A launch names its buffers by slot, not by address, so that an executable records
// once and re-runs with new buffers: addresses are patched into the push constants (and the
// parameter block, for parameters over 128 bytes) when it runs.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "exec/stream.hpp"
#include "kernels/kernel_cache.hpp"

namespace nxv {

// A byte offset into the buffer bound to a slot.
struct BufferRef {
  uint32_t slot = 0;
  uint64_t byte_offset = 0;
};

// Where a device address goes: at `offset` bytes into the push constants or parameter block.
struct AddressPatch {
  uint32_t offset = 0;
  BufferRef ref;
};

struct Launch {
  const Kernel* kernel = nullptr;
  std::array<uint32_t, 3> grid{1, 1, 1};  // workgroups
  std::array<std::byte, kPushConstantBytes> push{};  // inline: a launch is built per eager op
  uint32_t push_size = 0;
  std::vector<AddressPatch> push_addresses;
  // Optional parameter block: its device address is written at `params_address_offset` of the
  // push constants.
  std::vector<std::byte> params;
  std::vector<AddressPatch> params_addresses;
  uint32_t params_address_offset = 0;
  std::vector<std::pair<uint32_t, Access>> uses;  // slots read and written
  // A host step instead of a kernel (CPU drivers' BLAS): run after the work recorded before
  // it has finished, with the executable's buffers.
  std::function<void(std::span<const std::shared_ptr<Buffer>>)> host;
  // A short host step that runs at once, on any thread, when the GPU owes none of its buffers
  // anything (LaunchBuilder::immediate_host).
  bool immediate = false;
};

// A flag on the device that gates a run: its launches run only where the 32-bit word at
// `byte_offset` (a multiple of 4) of `buffer` is nonzero when the GPU reaches them
// (VK_EXT_conditional_rendering; the device must have it enabled).
struct Gate {
  std::shared_ptr<Buffer> buffer;
  uint64_t byte_offset = 0;
};

// A recorded list of launches over `slots` buffers.
class Executable {
 public:
  uint32_t slot_count() const { return slot_count_; }
  const std::vector<Launch>& launches() const { return launches_; }
  bool has_host_steps() const { return has_host_steps_; }
  // Runs the executable at once if it is only immediate host steps whose buffers the GPU
  // owes nothing; returns whether it ran.
  bool run_at_once(Stream& stream, std::span<const std::shared_ptr<Buffer>> buffers) const;
  // Records every launch on `stream` with `buffers` bound to the slots (one per slot). A host
  // step runs once the work recorded before it has finished (run then blocks; inside a
  // CompileFreeScope it throws KernelNotReady before recording anything). An executable of
  // immediate host steps only runs them at once where the GPU has finished every write to
  // their buffers.
  // With a `gate`, the launches are recorded between conditional-rendering commands on it; an
  // executable with host steps cannot be gated (InvalidArgument). `slot_offsets` (empty, or one
  // per slot): where in its buffer each slot starts, in bytes (an executable with host steps
  // takes none: InvalidArgument).
  void run(Stream& stream, vk::PipelineLayout layout, std::span<const std::shared_ptr<Buffer>> buffers,
           const Gate* gate = nullptr, std::span<const uint64_t> slot_offsets = {}) const;
  // The launches in another order (`order` a permutation of their indices): the caller keeps
  // every launch after those whose results it reads (graph/level_schedule.hpp).
  void reorder(const std::vector<size_t>& order);

 private:
  friend class LaunchBuilder;
  void record(Stream& stream, vk::PipelineLayout layout, std::span<const std::shared_ptr<Buffer>> buffers, size_t begin,
              size_t end, const Gate* gate = nullptr, std::span<const uint64_t> slot_offsets = {}) const;
  // Whether every launch is an immediate host step whose buffers the GPU owes nothing.
  bool immediate_ready(Stream& stream, std::span<const std::shared_ptr<Buffer>> buffers) const;
  uint32_t slot_count_ = 0;
  std::vector<Launch> launches_;
  bool has_host_steps_ = false;
};

// Builds an Executable. Lowerings bind buffers to slots, then append launches whose push
// constants are a struct declared once for C++ and GLSL (see ops/elementwise/elementwise_push.h).
class LaunchBuilder {
 public:
  LaunchBuilder() { buffers_.reserve(4); }  // an eager op binds up to four buffers: one allocation
  // A new slot with `access`, or the existing one of the same buffer.
  uint32_t bind(const std::shared_ptr<Buffer>& buffer);
  // The buffer bound to `slot` while building (for chunk geometry).
  const Buffer& buffer(uint32_t slot) const { return *buffers_[slot]; }

  template <typename Push>
  Launch& launch(const Kernel& kernel, std::array<uint32_t, 3> grid, const Push& push,
                 std::vector<AddressPatch> addresses) {
    static_assert(std::is_trivially_copyable_v<Push> && sizeof(Push) <= kPushConstantBytes);
    Launch& l = exec_.launches_.emplace_back();
    l.kernel = &kernel;
    l.grid = grid;
    std::memcpy(l.push.data(), &push, sizeof(Push));
    l.push_size = sizeof(Push);
    l.push_addresses = std::move(addresses);
    l.uses.reserve(4);
    return l;
  }
  // A host step (Launch::host); its uses still name the slots it reads and writes.
  Launch& host_step(std::function<void(std::span<const std::shared_ptr<Buffer>>)> fn) {
    Launch& l = exec_.launches_.emplace_back();
    l.host = std::move(fn);
    exec_.has_host_steps_ = true;
    return l;
  }
  // Attaches a parameter block to `l`; its address goes at `address_offset` of the push.
  template <typename Params>
  void params(Launch& l, const Params& params, uint32_t address_offset, std::vector<AddressPatch> addresses) {
    static_assert(std::is_trivially_copyable_v<Params>);
    l.params.resize(sizeof(Params));
    std::memcpy(l.params.data(), &params, sizeof(Params));
    l.params_addresses = std::move(addresses);
    l.params_address_offset = address_offset;
  }
  void use(Launch& l, uint32_t slot, Access access) { l.uses.emplace_back(slot, access); }

  const std::vector<std::shared_ptr<Buffer>>& buffers() const { return buffers_; }
  Executable finish() &&;
  // For an eager op on a CPU driver: where `stream` is idle when a lowering asks, it may
  // append a short host step marked immediate (Launch::immediate) in place of a kernel.
  void allow_immediate_host(Stream& stream) { idle_source_ = &stream; }
  bool immediate_host() {
    if (idle_source_ && !idle_) idle_ = idle_source_->idle();  // asked once, by the lowerings that could
    return idle_.value_or(false);
  }

 private:
  Stream* idle_source_ = nullptr;
  std::optional<bool> idle_;
  Executable exec_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
};

}  // namespace nxv
