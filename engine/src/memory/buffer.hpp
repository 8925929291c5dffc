// Device memory with shared ownership. A Buffer lives while any tensor or any recorded or
// in-flight command holds it, so a buffer freed while still in use cannot occur.
// Large buffers span several VkBuffers ("chunks") of the device's chunk size, each addressed
// through its buffer device address.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <vk_mem_alloc.h>

#include "device/device_core.hpp"
#include "memory/buffer_cache.hpp"

namespace nxv {

enum class BufferKind {
  Device,    // tensors: device-local, host access only where the memory type happens to allow it
  Upload,    // staging for host -> device, host-visible and mapped
  Download,  // staging for device -> host, host-visible, cached when possible, mapped
};

class Buffer {
 public:
  // Throws Error(OutOfMemory) when the allocator refuses; nothing is leaked then.
  Buffer(std::shared_ptr<DeviceCore> core, uint64_t bytes, BufferKind kind);
  // A device buffer over chunks of size class `class_bytes` taken from another (release_chunks).
  Buffer(std::shared_ptr<DeviceCore> core, uint64_t bytes, uint64_t class_bytes, std::vector<BufferChunk> chunks);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const { return size_; }
  BufferKind kind() const { return kind_; }
  uint64_t class_bytes() const { return class_bytes_; }
  uint64_t chunk_bytes() const { return chunk_bytes_; }
  const std::vector<BufferChunk>& chunks() const { return chunks_; }
  // Hands this device buffer's memory to another Buffer (stream-ordered reuse: the caller
  // orders the new owner's work after this one's). This buffer is left empty and no longer
  // counts as memory in use; only the stream, which holds it for recorded work, may call it.
  std::vector<BufferChunk> release_chunks();
  DeviceCore& core() const { return *core_; }
  const std::shared_ptr<DeviceCore>& core_ptr() const { return core_; }

  // Device address of `byte_offset`; the range up to the end of its chunk is contiguous.
  VkDeviceAddress address_at(uint64_t byte_offset) const;
  uint64_t bytes_left_in_chunk(uint64_t byte_offset) const;
  // Whether the host may read/write it through a mapping (after waiting for the GPU).
  bool host_readable() const { return host_readable_; }
  bool host_writable() const { return host_writable_; }
  // Host copies through the mapping, chunk by chunk (invalidate/flush included).
  void write_host(uint64_t offset, const void* src, uint64_t bytes);
  void read_host(uint64_t offset, void* dst, uint64_t bytes) const;

  // Set by the device's Stream under its lock: the batch that last wrote this buffer and the
  // barrier epoch inside that batch, to insert barriers only on real read-after-write hazards.
  uint64_t last_write_batch = 0;
  uint64_t last_write_epoch = 0;
  bool last_write_disjoint = false;
  // Set (under the same lock) when a submission that would have written this buffer failed:
  // its contents were never computed, and reading it is an error.
  bool contents_lost = false;

 private:
  std::shared_ptr<DeviceCore> core_;
  void allocate_chunks(uint64_t bytes);
  void set_host_access();

  uint64_t size_ = 0;
  uint64_t class_bytes_ = 0;  // the buffer cache's size class (device buffers)
  uint64_t chunk_bytes_ = 0;
  BufferKind kind_;
  bool host_readable_ = true, host_writable_ = true;
  bool released_ = false;
  std::vector<BufferChunk> chunks_;
};

}  // namespace nxv
