#include "memory/buffer_cache.hpp"

#include <bit>

namespace nxv {

uint64_t BufferCache::size_class(uint64_t bytes) {
  if (bytes <= 256) return 256;
  uint64_t top = std::bit_floor(bytes);
  uint64_t step = std::max<uint64_t>(top / 8, 256);
  return (bytes + step - 1) / step * step;
}

std::optional<std::vector<BufferChunk>> BufferCache::take(uint64_t class_bytes) {
  std::lock_guard lock(mutex_);
  auto it = free_.find(class_bytes);
  if (it == free_.end()) return std::nullopt;
  auto chunks = std::move(it->second.chunks);
  free_.erase(it);
  cached_ -= class_bytes;
  return chunks;
}

void BufferCache::give(uint64_t class_bytes, std::vector<BufferChunk> chunks) {
  std::vector<std::vector<BufferChunk>> evicted;
  {
    std::lock_guard lock(mutex_);
    if (class_bytes <= limit_) {
      while (cached_ + class_bytes > limit_) {
        auto oldest = free_.begin();
        for (auto it = free_.begin(); it != free_.end(); ++it)
          if (it->second.sequence < oldest->second.sequence) oldest = it;
        cached_ -= oldest->first;
        evicted.push_back(std::move(oldest->second.chunks));
        free_.erase(oldest);
      }
      free_.emplace(class_bytes, Entry{next_sequence_++, std::move(chunks)});
      cached_ += class_bytes;
    }
  }
  // Freed outside the lock: returning memory to the driver is slow.
  for (auto& e : evicted) destroy(allocator_, e, true);
  if (!chunks.empty()) destroy(allocator_, chunks, true);
}

void BufferCache::clear() {
  std::multimap<uint64_t, Entry> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(free_);
    cached_ = 0;
  }
  for (auto& [_, entry] : all) destroy(allocator_, entry.chunks, true);
}

bool BufferCache::has(uint64_t class_bytes) const {
  std::lock_guard lock(mutex_);
  return free_.count(class_bytes) > 0;
}

uint64_t BufferCache::cached_bytes() const {
  std::lock_guard lock(mutex_);
  return cached_;
}

void BufferCache::destroy(VmaAllocator allocator, std::vector<BufferChunk>& chunks, bool unmap) {
  for (auto& c : chunks) {
    if (c.mapped && unmap) vmaUnmapMemory(allocator, c.allocation);
    vmaDestroyBuffer(allocator, c.buffer, c.allocation);
  }
  chunks.clear();
}

}  // namespace nxv
