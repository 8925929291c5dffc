#include "memory/buffer.hpp"

#include <algorithm>
#include <cstring>

#include "common/errors.hpp"

namespace nxv {

Buffer::Buffer(std::shared_ptr<DeviceCore> core, uint64_t bytes, BufferKind kind)
    : core_(std::move(core)), size_(bytes), chunk_bytes_(core_->chunk_bytes()), kind_(kind) {
  if (kind == BufferKind::Device && bytes > 0) {
    class_bytes_ = BufferCache::size_class(bytes);
    if (auto cached = core_->buffer_cache().take(class_bytes_)) chunks_ = std::move(*cached);
    else allocate_chunks(class_bytes_);
  } else {
    allocate_chunks(bytes);
  }
  set_host_access();
  if (kind == BufferKind::Device) core_->note_allocated(bytes);
}

Buffer::Buffer(std::shared_ptr<DeviceCore> core, uint64_t bytes, uint64_t class_bytes, std::vector<BufferChunk> chunks)
    : core_(std::move(core)),
      size_(bytes),
      class_bytes_(class_bytes),
      chunk_bytes_(core_->chunk_bytes()),
      kind_(BufferKind::Device),
      chunks_(std::move(chunks)) {
  set_host_access();
  core_->note_allocated(bytes);
}

std::vector<BufferChunk> Buffer::release_chunks() {
  if (kind_ != BufferKind::Device || chunks_.empty()) return {};
  core_->note_freed(size_);
  released_ = true;
  std::vector<BufferChunk> out = std::move(chunks_);
  chunks_.clear();
  return out;
}

void Buffer::allocate_chunks(uint64_t bytes) {
  VmaAllocationCreateInfo alloc{};
  switch (kind_) {
    case BufferKind::Device:
      // Device-local first; VMA may still pick host-visible memory (UMA, CPU devices, ReBAR),
      // and then the host reads and writes it directly instead of staging.
      alloc.usage = VMA_MEMORY_USAGE_AUTO_PREFER_DEVICE;
      alloc.flags = VMA_ALLOCATION_CREATE_HOST_ACCESS_RANDOM_BIT |
                    VMA_ALLOCATION_CREATE_HOST_ACCESS_ALLOW_TRANSFER_INSTEAD_BIT;
      // Never spill into system memory behind the PCIe bus: a full device is out of memory.
      alloc.requiredFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      break;
    case BufferKind::Upload:
      alloc.flags = VMA_ALLOCATION_CREATE_HOST_ACCESS_SEQUENTIAL_WRITE_BIT | VMA_ALLOCATION_CREATE_MAPPED_BIT;
      alloc.usage = VMA_MEMORY_USAGE_AUTO_PREFER_HOST;
      break;
    case BufferKind::Download:
      alloc.flags = VMA_ALLOCATION_CREATE_HOST_ACCESS_RANDOM_BIT | VMA_ALLOCATION_CREATE_MAPPED_BIT;
      alloc.usage = VMA_MEMORY_USAGE_AUTO_PREFER_HOST;
      break;
  }
  VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  // Any device tensor may gate a program's run (Program::run_gated).
  if (kind_ == BufferKind::Device && core_->info().features.conditional_rendering)
    usage |= VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT;
  VkDevice device = static_cast<VkDevice>(*core_->device());
  for (uint64_t done = 0; done < bytes; done += chunk_bytes_) {
    BufferChunk chunk;
    chunk.size = std::min(chunk_bytes_, bytes - done);
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = chunk.size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VmaAllocationInfo got{};
    VkResult r = vmaCreateBuffer(core_->allocator(), &info, &alloc, &chunk.buffer, &chunk.allocation, &got);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      // Memory kept for reuse goes back to the driver before we give up.
      core_->buffer_cache().clear();
      r = vmaCreateBuffer(core_->allocator(), &info, &alloc, &chunk.buffer, &chunk.allocation, &got);
    }
    if (r != VK_SUCCESS) {
      BufferCache::destroy(core_->allocator(), chunks_, kind_ == BufferKind::Device);
      if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        throw Error(ErrorKind::OutOfMemory, "out of device memory allocating " + std::to_string(bytes) +
                                                " bytes (" + std::to_string(core_->memory_stats().bytes_in_use) +
                                                " bytes in use)");
      throw_vk(static_cast<vk::Result>(r), "vmaCreateBuffer");
    }
    vmaGetAllocationMemoryProperties(core_->allocator(), chunk.allocation, &chunk.flags);
    if (kind_ == BufferKind::Device) {
      if (chunk.flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        void* p = nullptr;
        if (vmaMapMemory(core_->allocator(), chunk.allocation, &p) == VK_SUCCESS)
          chunk.mapped = static_cast<std::byte*>(p);
      }
    } else {
      chunk.mapped = static_cast<std::byte*>(got.pMappedData);
    }
    VkBufferDeviceAddressInfo addr{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    addr.buffer = chunk.buffer;
    chunk.address = core_->device().getDispatcher()->vkGetBufferDeviceAddress(device, &addr);
    chunks_.push_back(chunk);
  }
}

void Buffer::set_host_access() {
  host_readable_ = host_writable_ = true;  // also for an empty buffer: nothing to move
  for (const auto& c : chunks_) {
    if (!c.mapped) host_readable_ = host_writable_ = false;
    // Reads through uncached (write-combined) memory are slow: stage those instead.
    if (kind_ == BufferKind::Device && !(c.flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)) host_readable_ = false;
  }
}

Buffer::~Buffer() {
  if (kind_ == BufferKind::Device) {
    if (!released_) core_->note_freed(size_);
    if (!chunks_.empty()) core_->buffer_cache().give(class_bytes_, std::move(chunks_));
  } else {
    BufferCache::destroy(core_->allocator(), chunks_, false);
  }
}

VkDeviceAddress Buffer::address_at(uint64_t byte_offset) const {
  const auto& c = chunks_.at(byte_offset / chunk_bytes_);
  return c.address + byte_offset % chunk_bytes_;
}

uint64_t Buffer::bytes_left_in_chunk(uint64_t byte_offset) const {
  const auto& c = chunks_.at(byte_offset / chunk_bytes_);
  return c.size - byte_offset % chunk_bytes_;
}

void Buffer::write_host(uint64_t offset, const void* src, uint64_t bytes) {
  const auto* s = static_cast<const std::byte*>(src);
  while (bytes > 0) {
    const auto& c = chunks_.at(offset / chunk_bytes_);
    uint64_t in_chunk = offset % chunk_bytes_;
    uint64_t n = std::min(bytes, c.size - in_chunk);
    std::memcpy(c.mapped + in_chunk, s, n);
    vmaFlushAllocation(core_->allocator(), c.allocation, in_chunk, n);
    s += n;
    offset += n;
    bytes -= n;
  }
}

void Buffer::read_host(uint64_t offset, void* dst, uint64_t bytes) const {
  auto* d = static_cast<std::byte*>(dst);
  while (bytes > 0) {
    const auto& c = chunks_.at(offset / chunk_bytes_);
    uint64_t in_chunk = offset % chunk_bytes_;
    uint64_t n = std::min(bytes, c.size - in_chunk);
    vmaInvalidateAllocation(core_->allocator(), c.allocation, in_chunk, n);
    std::memcpy(d, c.mapped + in_chunk, n);
    d += n;
    offset += n;
    bytes -= n;
  }
}

}  // namespace nxv
