// Device memory kept for reuse. Creating a VkBuffer and its memory costs far more than a
// kernel on a fast GPU (drivers zero new memory), and training loops free and ask for the
// same sizes again and again; like the caching allocators of PyTorch and XLA, freed tensor
// buffers are kept by size class up to a byte limit and handed out again. They do not count
// as bytes in use; out-of-memory empties the cache before giving up. When a freed buffer does
// not fit under the limit, the buffers cached longest ago make room for it: the cache follows
// the sizes the program uses now (a cache full of one phase's sizes would otherwise make every
// later allocation a fresh one, which the driver zeroes on the GPU).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <vk_mem_alloc.h>

namespace nxv {

struct BufferChunk {
  VkBuffer buffer = VK_NULL_HANDLE;
  VmaAllocation allocation = nullptr;
  VkDeviceAddress address = 0;
  uint64_t size = 0;
  std::byte* mapped = nullptr;  // non-null where the host can reach this memory directly
  VkMemoryPropertyFlags flags = 0;
};

class BufferCache {
 public:
  BufferCache(VmaAllocator allocator, uint64_t limit_bytes) : allocator_(allocator), limit_(limit_bytes) {}
  ~BufferCache() { clear(); }
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // The size actually allocated for a request of `bytes`: classes 1/8 of a power of two apart,
  // so that reuse wastes at most 12.5%.
  static uint64_t size_class(uint64_t bytes);

  std::optional<std::vector<BufferChunk>> take(uint64_t class_bytes);
  // Keeps the chunks, freeing the oldest cached buffers if needed to stay under the limit;
  // frees them at once if they alone exceed it.
  void give(uint64_t class_bytes, std::vector<BufferChunk> chunks);
  void clear();
  bool has(uint64_t class_bytes) const;
  uint64_t limit() const { return limit_; }
  uint64_t cached_bytes() const;

  // Frees chunks; `unmap` for memory mapped with vmaMapMemory (not VMA's persistent mapping).
  static void destroy(VmaAllocator allocator, std::vector<BufferChunk>& chunks, bool unmap);

 private:
  VmaAllocator allocator_;
  uint64_t limit_;
  mutable std::mutex mutex_;
  struct Entry {
    uint64_t sequence;  // order of caching, for eviction
    std::vector<BufferChunk> chunks;
  };
  std::multimap<uint64_t, Entry> free_;  // by size class
  uint64_t cached_ = 0;
  uint64_t next_sequence_ = 0;
};

}  // namespace nxv
