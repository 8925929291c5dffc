// The asynchronous stream of one device. Ops are recorded into a command buffer and submitted
// in batches without waiting; each batch signals a timeline-semaphore value, and a download
// waits only for the batch that last wrote its buffer. Barriers are inserted only on real
// hazards (a buffer read or written after a write, or written after a read, in the same batch).
// The recording thread submits a batch when it holds 64 commands, or when the device has run
// dry and the batch is older than the deferral (DeviceProfile::submit_defer: 50 us on GPUs,
// none on CPU drivers): a burst of tiny ops then shares one vkQueueSubmit2 instead of paying
// one every few ops, and a timer thread submits a deferred batch that no later op or wait
// submits first (the thread also runs where submissions are excluded during pipeline
// creation, to take the batches of callers that may not block). With no
// deferral a dry device gets each batch at once. A caller about to wait submits its own batch,
// and a failed submission shows as the loss of what it would have written.
// All methods are thread-safe: recording and batch hand-over are serialised by one mutex;
// submission and waiting happen outside it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/vk.hpp"
#include "device/device_core.hpp"
#include "exec/kernel_profile.hpp"
#include "memory/buffer.hpp"
#include "nxv/error.hpp"

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
  // Counts one command (dispatch or copy) toward the batch size; ends the uses of that command.
  void count_command() {
    ++commands_;
    command_writes_.clear();
  }
  // Copies a parameter block (kernel parameters too large for push constants) into
  // host-visible memory kept until the batch has finished; returns its device address
  // (16-byte aligned).
  uint64_t params(const void* data, size_t bytes);
  // Names a dispatch in the batch's trace, kept only while NX_VULKAN_WAIT_LIMIT_S is set:
  // a wait past the limit names the kernels of the batch the GPU has not finished.
  bool tracing() const;
  void trace(std::string_view what);
  // With NX_VULKAN_PROFILE=1: the dispatch just recorded is timed under `label`.
  bool profiling() const;
  void timed(std::string_view label);

 private:
  friend class Stream;
  Recorder(Stream& s, const vk::raii::CommandBuffer& c) : stream_(s), cmd_(c) {}
  Stream& stream_;
  const vk::raii::CommandBuffer& cmd_;
  uint32_t commands_ = 0;
  // Buffers the next command writes: a barrier that a later use of the same command records
  // also comes before their writes, which then date from after it.
  std::vector<Buffer*> command_writes_;
};

class Stream {
 public:
  explicit Stream(std::shared_ptr<DeviceCore> core);
  ~Stream();  // waits for everything submitted
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `record` with the lock held on the open batch, which the submitting thread takes
  // when it is free. Exceptions from `record` leave the batch usable.
  void record(const std::function<void(Recorder&)>& record);
  // Blocks until the GPU has finished the batch that last wrote `buffer`, or for at most
  // `timeout_ns`: returns whether it has finished.
  bool wait_for_writes(const Buffer& buffer, uint64_t timeout_ns = UINT64_MAX);
  // Submits the open batch (if any) and waits for all work.
  void synchronize();
  // Whether no work is recorded, queued or unfinished on the GPU (raises if the device is
  // lost): work that the host may do at once then waits for nothing.
  bool idle();
  // Whether the GPU has finished every write to `buffer` recorded until now, without
  // submitting or waiting (raises for contents lost, as wait_for_writes does).
  bool writes_finished(const Buffer& buffer);
  // Submits the open batch without waiting.
  void flush();
  // Submits the open batch where the GPU has nothing else to run (no batch queued, submitting or
  // unfinished): work that would otherwise wait out the deferral on an idle GPU.
  void flush_if_dry();
  StreamStats stats() const;
  // GPU time per kernel of the work recorded until now (waits for it; KernelProfiler).
  std::vector<KernelTime> kernel_profile();
  // Fault injection for tests: the `n`-th submission from now fails as if the driver had
  // refused it (n >= 1; 0 disarms). NX_VULKAN_FAIL_SUBMIT=n arms it when the stream is created.
  // A failed submission loses that batch and every batch recorded before the failure was
  // known (they may read its outputs): reading what they wrote raises, naming the failure.
  // `result` is the failure reported; VK_ERROR_DEVICE_LOST marks the device lost.
  void fail_submission(uint64_t n, vk::Result result = vk::Result::eErrorOutOfDeviceMemory);

  // Stream-ordered reuse (stream_reclaim.cpp): the memory of a device buffer of size class
  // `class_bytes` that only recorded or in-flight work still holds (its tensors were dropped),
  // for a new buffer whose work this stream runs after that work. The new buffer must take
  // `after_batch` / `after_epoch` as its last write, so that its first use in the same batch
  // records a barrier (write after read) and host access waits for the old work.
  struct Reclaimed {
    std::vector<BufferChunk> chunks;
    uint64_t after_batch = 0, after_epoch = 0;
  };
  std::optional<Reclaimed> reclaim_dropped(uint64_t class_bytes);

 private:
  friend class Recorder;
  struct Batch {
    uint64_t value = 0;
    std::optional<vk::raii::CommandBuffer> cmd;
    std::vector<std::shared_ptr<Buffer>> used;          // by its commands (reclaim_dropped scans them)
    std::vector<std::shared_ptr<Buffer>> param_blocks;  // the last one is being filled
    std::vector<std::shared_ptr<Buffer>> written;       // lost if the submission fails
    uint64_t param_used = 0;
    uint32_t commands = 0;
    std::chrono::steady_clock::time_point opened_at;
    std::string trace;  // its dispatches, while tracing
    KernelProfiler::Batch queries;  // while profiling
  };

  using Lock = std::unique_lock<std::mutex>;
  void open_batch_locked();
  // Ends the open batch and queues it for submission.
  void close_locked();
  // Submits queued batches in order until none is left, unless another thread is submitting
  // (it drains the queue itself). Returns the first failure, if any.
  std::optional<Error> submit_queued(Lock& lock);
  // close_locked, then submit_queued; throws a failure of this call's own submissions.
  void submit_now(Lock& lock);
  // Leaves the queued batches to the stream's deadline thread, if it has one.
  bool hand_off_locked();
  // Submits a deferred batch once its deadline has passed, if nothing else submitted it.
  void deadline_loop();
  void abandon_locked(Batch& batch);
  std::string lost_message() const;
  void retire_locked();
  void barrier_locked();
  // Whether `value` was reached within `timeout_ns`. With a wait limit of n seconds (settings), a wait
  // longer than n seconds raises instead, naming the stream's state (a hang made visible);
  // `locked`: the caller holds the stream's mutex.
  bool wait_value(uint64_t value, uint64_t timeout_ns = UINT64_MAX, bool locked = false);
  // The batches' timeline values (open, queued, submitting, in flight, completed), for errors.
  std::string describe_locked() const;
  uint64_t completed_value() const;

  std::shared_ptr<DeviceCore> core_;
  KernelProfiler profiler_;
  mutable std::mutex mutex_;
  std::optional<vk::raii::CommandPool> pool_;
  std::optional<vk::raii::Semaphore> timeline_;
  std::vector<vk::raii::CommandBuffer> free_cmds_;
  std::vector<std::shared_ptr<Buffer>> free_param_blocks_;
  // Emptied `used`/`written` lists of retired batches, kept for their capacity.
  std::vector<std::vector<std::shared_ptr<Buffer>>> free_lists_;
  std::optional<Batch> open_;
  std::deque<Batch> queued_;     // closed, waiting for submission, in value order
  bool submitting_ = false;      // a batch is between queued_ and in_flight_
  const Batch* submitting_batch_ = nullptr;  // that batch, while the mutex is released around the submit
  std::deque<Batch> in_flight_;
  uint64_t next_value_ = 1;
  uint64_t epoch_ = 1;  // barrier epoch inside the open batch
  bool tracing_ = false;
  StreamStats stats_;
  uint64_t submissions_ = 0;    // attempted, failed ones included
  uint64_t fail_at_ = 0;        // injected failure: the attempt with this number fails
  vk::Result fail_with_ = vk::Result::eErrorOutOfDeviceMemory;
  uint64_t doomed_through_ = 0;  // batches up to this value were recorded before a failure
  std::string last_failure_;     // named when a lost buffer is read
  bool stopping_ = false;
  uint64_t wait_limit_ns_ = 0;  // 0: waits are unbounded
  std::chrono::microseconds wait_spin_{0};
  std::chrono::nanoseconds defer_{0};  // how long a dry device may wait for more commands
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // of the deferred open batch
  std::condition_variable wake_deadline_;
  bool deadline_idle_ = false;  // the deadline thread waits for a deadline to be set
  std::thread deadline_thread_;  // started last, joined first
};

}  // namespace nxv
