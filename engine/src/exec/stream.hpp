// The asynchronous stream of one device. Ops are recorded into a command buffer and submitted
// in batches without waiting; each batch signals a timeline-semaphore value, and a download
// waits only for the batch that last wrote its buffer. Barriers are inserted only on real
// hazards (a buffer read or written after a write, or written after a read, in the same batch).
// All methods are thread-safe: recording and submission are serialised by one mutex, waiting
// happens outside it.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/vk.hpp"
#include "device/device_core.hpp"
#include "memory/buffer.hpp"

namespace nxv {

// WriteDisjoint: a write to a part of the buffer that no other write since the last barrier
// touches (the regions of a concatenation): consecutive such writes need no barrier between
// them.
enum class Access { Read, Write, WriteDisjoint };

struct StreamStats {
  uint64_t submits = 0, commands = 0, barriers = 0, waits = 0, failed_submits = 0;
};

class Stream;

// Handed to a recording function while the stream's lock is held.
class Recorder {
 public:
  const vk::raii::CommandBuffer& cmd() const { return cmd_; }
  const vk::raii::Device& device() const;
  // Declares a use of `buffer` by the next command: inserts a barrier on a hazard and keeps the
  // buffer alive until the batch has finished on the GPU.
  void use(const std::shared_ptr<Buffer>& buffer, Access access);
  // Keeps any object alive until the batch has finished.
  void keep(std::shared_ptr<const void> object);
  // Counts one command (dispatch or copy) toward the batch size.
  void count_command() { ++commands_; }
  // Copies a parameter block (kernel parameters too large for push constants) into
  // host-visible memory kept until the batch has finished; returns its device address
  // (16-byte aligned).
  uint64_t params(const void* data, size_t bytes);

 private:
  friend class Stream;
  Recorder(Stream& s, const vk::raii::CommandBuffer& c) : stream_(s), cmd_(c) {}
  Stream& stream_;
  const vk::raii::CommandBuffer& cmd_;
  uint32_t commands_ = 0;
};

class Stream {
 public:
  explicit Stream(std::shared_ptr<DeviceCore> core);
  ~Stream();  // waits for everything submitted
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `record` with the lock held on the open batch; submits when the batch is full or the
  // GPU has run dry. Exceptions from `record` leave the batch usable.
  void record(const std::function<void(Recorder&)>& record);
  // Blocks until the GPU has finished the batch that last wrote `buffer`.
  void wait_for_writes(const Buffer& buffer);
  // Submits the open batch (if any) and waits for all work.
  void synchronize();
  // Submits the open batch without waiting.
  void flush();
  StreamStats stats() const;
  // Fault injection for tests: the `n`-th submission from now fails as if the driver had
  // refused it (n >= 1; 0 disarms). NX_VULKAN_FAIL_SUBMIT=n arms it when the stream is created.
  void fail_submission(uint64_t n);

 private:
  friend class Recorder;
  struct Batch {
    uint64_t value = 0;
    std::optional<vk::raii::CommandBuffer> cmd;
    std::vector<std::shared_ptr<const void>> keep;
    std::vector<std::shared_ptr<Buffer>> param_blocks;  // the last one is being filled
    std::vector<std::shared_ptr<Buffer>> written;       // lost if the submission fails
    uint64_t param_used = 0;
    uint32_t commands = 0;
  };

  void open_batch_locked();
  void submit_locked();
  void abandon_locked(Batch& batch);
  void retire_locked(bool block_until_all);
  void barrier_locked();
  void wait_value(uint64_t value);
  uint64_t completed_value() const;

  std::shared_ptr<DeviceCore> core_;
  mutable std::mutex mutex_;
  std::optional<vk::raii::CommandPool> pool_;
  std::optional<vk::raii::Semaphore> timeline_;
  std::vector<vk::raii::CommandBuffer> free_cmds_;
  std::vector<std::shared_ptr<Buffer>> free_param_blocks_;
  std::optional<Batch> open_;
  std::deque<Batch> in_flight_;
  uint64_t next_value_ = 1;
  uint64_t epoch_ = 1;  // barrier epoch inside the open batch
  StreamStats stats_;
  uint64_t submissions_ = 0;    // attempted, failed ones included
  uint64_t fail_at_ = 0;        // injected failure: the attempt with this number fails
};

}  // namespace nxv
