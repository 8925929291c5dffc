// The parts of a Device: its core (device, queue, allocator), kernel cache and stream.
#pragma once
#include <memory>

#include "device/device_core.hpp"
#include "exec/stream.hpp"
#include "kernels/kernel_cache.hpp"
#include "memory/buffer.hpp"

namespace nxv {

class DeviceImpl {
 public:
  explicit DeviceImpl(std::shared_ptr<DeviceCore> core)
      : core(core), kernels(core), stream(core) {}

  // Allocates; on out-of-memory waits for in-flight work (which may free buffers) and retries
  // once before reporting OutOfMemory.
  // `stream_ordered`: the buffer's first access is recorded on the stream, so it may take the
  // memory of a dropped buffer that queued work still uses (Stream::reclaim_dropped).
  std::shared_ptr<Buffer> allocate(uint64_t bytes, BufferKind kind = BufferKind::Device, bool stream_ordered = true);

  std::shared_ptr<DeviceCore> core;
  KernelCache kernels;
  Stream stream;  // destroyed first: waits for the GPU before kernels and memory go
};

}  // namespace nxv
