#include "exec/stream.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>

#include "common/errors.hpp"
#include "common/settings.hpp"
#include "exec/phase_times.hpp"
#include "kernels/kernel_cache.hpp"

namespace nxv {
namespace {

const vk::MemoryBarrier2 kFullBarrier{
    .srcStageMask = vk::PipelineStageFlagBits2::eComputeShader | vk::PipelineStageFlagBits2::eTransfer,
    .srcAccessMask = vk::AccessFlagBits2::eShaderWrite | vk::AccessFlagBits2::eTransferWrite,
    .dstStageMask = vk::PipelineStageFlagBits2::eComputeShader | vk::PipelineStageFlagBits2::eTransfer,
    .dstAccessMask = vk::AccessFlagBits2::eShaderRead | vk::AccessFlagBits2::eShaderWrite |
                     vk::AccessFlagBits2::eTransferRead | vk::AccessFlagBits2::eTransferWrite};

// Settings::barrier_all, for diagnosis: a full barrier before every use of a buffer, as if each
// had just been written (a race that the hazard tracking misses then goes away). Read when a
// stream is created; process-wide.
std::atomic<bool> barrier_all{false};

constexpr const char* kContentsLost =
    "this tensor's contents were lost: the GPU submission that was to compute it failed "
    "(see the error raised then); compute it again";

}  // namespace

const vk::raii::Device& Recorder::device() const { return stream_.core_->device(); }

void Recorder::use(const std::shared_ptr<Buffer>& buffer, Access access) {
  auto& batch = *stream_.open_;
  Buffer& b = *buffer;
  if (b.contents_lost && access == Access::Read) throw Error(ErrorKind::Driver, stream_.lost_message());
  // Outputs are always fresh buffers and inputs are never written, so the only hazard is a
  // read (or write) of a buffer written earlier in this batch since the last barrier.
  bool written = b.last_write_batch == batch.value && b.last_write_epoch == stream_.epoch_;
  bool disjoint = access == Access::WriteDisjoint && b.last_write_disjoint;
  if ((written && !disjoint) || barrier_all.load(std::memory_order_relaxed)) {
    stream_.barrier_locked();
    for (Buffer* w : command_writes_) w->last_write_epoch = stream_.epoch_;
  }
  if (access != Access::Read) {
    b.last_write_batch = batch.value;
    b.last_write_epoch = stream_.epoch_;
    b.last_write_disjoint = access == Access::WriteDisjoint;
    batch.written.push_back(buffer);
    command_writes_.push_back(&b);
  }
  batch.used.push_back(buffer);
}


uint64_t Recorder::params(const void* data, size_t bytes) {
  constexpr uint64_t kBlockBytes = 64 * 1024;
  auto& batch = *stream_.open_;
  uint64_t offset = (batch.param_used + 15) & ~uint64_t(15);
  if (batch.param_blocks.empty() || offset + bytes > batch.param_blocks.back()->size()) {
    std::shared_ptr<Buffer> block;
    auto& free = stream_.free_param_blocks_;
    if (bytes <= kBlockBytes && !free.empty()) {
      block = std::move(free.back());
      free.pop_back();
    } else {
      block = std::make_shared<Buffer>(stream_.core_, std::max<uint64_t>(kBlockBytes, bytes), BufferKind::Upload);
    }
    batch.param_blocks.push_back(std::move(block));
    offset = 0;
  }
  Buffer& block = *batch.param_blocks.back();
  block.write_host(offset, data, bytes);
  batch.param_used = offset + bytes;
  return block.address_at(offset);
}

bool Recorder::tracing() const { return stream_.tracing_; }

bool Recorder::profiling() const { return stream_.profiler_.enabled(); }
void Recorder::timed(std::string_view label) { stream_.profiler_.after_dispatch(stream_.open_->queries, cmd_, label); }

void Recorder::trace(std::string_view what) {
  auto& trace = stream_.open_->trace;
  if (trace.size() > 4096) return;
  (trace += trace.empty() ? "" : "; ") += what;
}

Stream::Stream(std::shared_ptr<DeviceCore> core) : core_(std::move(core)), profiler_(*core_) {
  translate_vk("creating the stream", [&] {
    pool_.emplace(core_->device(),
                  vk::CommandPoolCreateInfo{.flags = vk::CommandPoolCreateFlagBits::eResetCommandBuffer,
                                            .queueFamilyIndex = core_->queue_family()});
    vk::SemaphoreTypeCreateInfo type{.semaphoreType = vk::SemaphoreType::eTimeline, .initialValue = 0};
    timeline_.emplace(core_->device(), vk::SemaphoreCreateInfo{.pNext = &type});
  });
  auto s = settings();
  fail_at_ = s->fail_submit;
  wait_limit_ns_ = s->wait_limit_s * 1'000'000'000ull;
  tracing_ = wait_limit_ns_ > 0;
  barrier_all.store(s->barrier_all, std::memory_order_relaxed);
  defer_ = core_->profile().submit_defer;
  wait_spin_ = core_->profile().wait_spin;
  // The thread also takes the batches that a caller which may not block hands over while a
  // pipeline is being created (hand_off_locked): without it, that caller would wait for a
  // creation it may itself be holding.
  if (defer_.count() > 0 || core_->submit_exclusion().enabled())
    deadline_thread_ = std::thread([this] { deadline_loop(); });
}

std::vector<KernelTime> Stream::kernel_profile() {
  synchronize();  // retires everything recorded until now
  return profiler_.take();
}

void Stream::fail_submission(uint64_t n, vk::Result result) {
  std::lock_guard lock(mutex_);
  fail_at_ = n == 0 ? 0 : submissions_ + n;
  fail_with_ = result;
}

Stream::~Stream() {
  try {
    synchronize();
  } catch (...) {
    // Device lost: nothing more can be waited for; handles are released below regardless.
    try {
      core_->device().waitIdle();
    } catch (...) {
    }
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_deadline_.notify_one();
  if (deadline_thread_.joinable()) deadline_thread_.join();
  std::lock_guard lock(mutex_);
  in_flight_.clear();
  queued_.clear();
  open_.reset();
  free_cmds_.clear();
  free_param_blocks_.clear();
}

void Stream::open_batch_locked() {
  if (open_) return;
  Batch batch;
  batch.value = next_value_++;
  if (tracing_) batch.trace.reserve(256);
  if (!free_cmds_.empty()) {
    batch.cmd.emplace(std::move(free_cmds_.back()));
    free_cmds_.pop_back();
  } else {
    vk::CommandBufferAllocateInfo info{
        .commandPool = **pool_, .level = vk::CommandBufferLevel::ePrimary, .commandBufferCount = 1};
    batch.cmd.emplace(std::move(vk::raii::CommandBuffers(core_->device(), info).front()));
  }
  (*batch.cmd).begin({.flags = vk::CommandBufferUsageFlagBits::eOneTimeSubmit});
  // Orders this batch after everything submitted before it (submission order is not enough).
  vk::DependencyInfo dep{.memoryBarrierCount = 1, .pMemoryBarriers = &kFullBarrier};
  (*batch.cmd).pipelineBarrier2(dep);
  profiler_.begin(batch.queries, *batch.cmd);
  for (auto* list : {&batch.used, &batch.written}) {
    if (free_lists_.empty()) break;
    *list = std::move(free_lists_.back());
    free_lists_.pop_back();
  }
  epoch_ = 1;
  batch.opened_at = std::chrono::steady_clock::now();
  open_.emplace(std::move(batch));
}

void Stream::barrier_locked() {
  vk::DependencyInfo dep{.memoryBarrierCount = 1, .pMemoryBarriers = &kFullBarrier};
  (*open_->cmd).pipelineBarrier2(dep);
  ++epoch_;
  ++stats_.barriers;
}

void Stream::record(const std::function<void(Recorder&)>& fn) {
  // A batch is closed when it holds this many commands; without the thread, it is also
  // submitted when the device is idle and the batch is older than the deferral.
  constexpr uint32_t kMaxCommandsPerBatch = 64;
  bool wake_deadline = false;
  {
    std::optional<PhaseTimer> lock_time(std::in_place, Phase::StreamLock);
    Lock lock(mutex_);
    lock_time.reset();
    core_->check_not_lost();
    translate_vk("recording", [&] {
      {
        PhaseTimer t(Phase::OpenBatch);
        open_batch_locked();
      }
      Recorder rec(*this, *open_->cmd);
      {
        PhaseTimer t(Phase::RecordCommands);
        fn(rec);
      }
      bool first = open_->commands == 0;
      open_->commands += rec.commands_;
      stats_.commands += rec.commands_;
      // Polling the timeline is a driver call: once per batch here, and below where whether
      // the device is dry decides a submission.
      if (first) {
        PhaseTimer t(Phase::Retire);
        retire_locked();
      }
    });
    bool full = open_->commands >= kMaxCommandsPerBatch;
    bool due = full;
    if (!full && open_->commands > 0) {
      auto deadline = open_->opened_at + defer_;
      bool old = defer_.count() == 0 || std::chrono::steady_clock::now() >= deadline;
      if (old) translate_vk("retiring", [&] { retire_locked(); });
      if (old && in_flight_.empty()) {
        due = true;
      } else if (!deadline_ && defer_.count() > 0) {
        // Also bounds how long a batch recorded behind busy work waits for the next op.
        deadline_ = deadline;
        wake_deadline = deadline_idle_;
      }
    }
    if (due) {
      // A failure shows as the loss of what the batch would have written.
      translate_vk("submitting", [&] { close_locked(); });
      submit_queued(lock);
    }
  }
  if (wake_deadline) wake_deadline_.notify_one();
}

void Stream::deadline_loop() {
  Lock lock(mutex_);
  while (!stopping_) {
    if (!deadline_) {
      deadline_idle_ = true;
      wake_deadline_.wait(lock, [&] { return stopping_ || deadline_.has_value(); });
      deadline_idle_ = false;
      continue;
    }
    auto deadline = *deadline_;
    // Woken early only to stop; a deadline cleared or moved is found on waking.
    wake_deadline_.wait_until(lock, deadline, [&] { return stopping_; });
    if (stopping_) return;
    if (deadline_ != deadline) continue;
    deadline_.reset();
    bool open_work = open_ && open_->commands > 0;
    if (!open_work && queued_.empty()) continue;
    try {
      if (open_work) close_locked();
      submit_queued(lock);  // a failure is reported through the buffers it lost
    } catch (...) {
      // Ending a command buffer failed (device lost): its waits report it.
    }
  }
}

void Stream::close_locked() {
  if (!open_) return;
  deadline_.reset();
  Batch batch = std::move(*open_);
  open_.reset();
  auto& cmd = *batch.cmd;
  // Makes the batch's writes visible to host reads through mapped memory.
  vk::MemoryBarrier2 to_host{
      .srcStageMask = vk::PipelineStageFlagBits2::eComputeShader | vk::PipelineStageFlagBits2::eTransfer,
      .srcAccessMask = vk::AccessFlagBits2::eShaderWrite | vk::AccessFlagBits2::eTransferWrite,
      .dstStageMask = vk::PipelineStageFlagBits2::eHost,
      .dstAccessMask = vk::AccessFlagBits2::eHostRead};
  cmd.pipelineBarrier2({.memoryBarrierCount = 1, .pMemoryBarriers = &to_host});
  cmd.end();
  queued_.push_back(std::move(batch));
}

std::optional<Error> Stream::submit_queued(Lock& lock) {
  std::optional<Error> failure;
  SubmitExclusion& exclusion = core_->submit_exclusion();
  while (!queued_.empty() && !submitting_) {
    std::optional<SubmitExclusion::Submission> admitted;
    if (exclusion.enabled()) {
      admitted.emplace(exclusion, false);
      if (!admitted->owns()) {
        // A pipeline is being created: a caller that may not block leaves the queue to the
        // stream's thread; others wait without the lock (`submitting_` keeps the order).
        if (CompileFreeScope::active() && hand_off_locked()) break;
        admitted.reset();
        submitting_ = true;
        lock.unlock();
        admitted.emplace(exclusion, true);
        lock.lock();
        submitting_ = false;
      }
    }
    Batch batch = std::move(queued_.front());
    queued_.pop_front();
    if (batch.value <= doomed_through_) {
      abandon_locked(batch);
      continue;
    }
    vk::CommandBufferSubmitInfo cmd_info{.commandBuffer = **batch.cmd};
    vk::SemaphoreSubmitInfo signal{.semaphore = **timeline_,
                                   .value = batch.value,
                                   .stageMask = vk::PipelineStageFlagBits2::eAllCommands};
    vk::SubmitInfo2 submit{.commandBufferInfoCount = 1,
                           .pCommandBufferInfos = &cmd_info,
                           .signalSemaphoreInfoCount = 1,
                           .pSignalSemaphoreInfos = &signal};
    bool injected = ++submissions_ == fail_at_;
    submitting_ = true;
    submitting_batch_ = &batch;
    lock.unlock();
    VkResult r;
    {
      PhaseTimer t(Phase::Submit);
      // vkQueueSubmit is externally synchronised: `submitting_` admits one submitter at a time.
      r = injected ? static_cast<VkResult>(fail_with_)
                   : core_->device().getDispatcher()->vkQueueSubmit2(static_cast<VkQueue>(core_->queue()), 1,
                                                                     reinterpret_cast<const VkSubmitInfo2*>(&submit),
                                                                     VK_NULL_HANDLE);
    }
    lock.lock();
    submitting_ = false;
    submitting_batch_ = nullptr;
    if (r == VK_SUCCESS) {
      ++stats_.submits;
      in_flight_.push_back(std::move(batch));
      continue;
    }
    std::string what = injected ? "vkQueueSubmit2 (failure injected by NX_VULKAN_FAIL_SUBMIT / fail_submission)"
                                : "vkQueueSubmit2";
    what += " failed: " + vk::to_string(static_cast<vk::Result>(r));
    if (r == VK_ERROR_DEVICE_LOST) core_->mark_lost();
    // Every batch recorded until now may read what this one would have written.
    doomed_through_ = next_value_ - 1;
    last_failure_ = what;
    abandon_locked(batch);
    if (!failure) failure.emplace(error_kind_for(static_cast<vk::Result>(r)), what);
  }
  return failure;
}

bool Stream::hand_off_locked() {
  if (!deadline_thread_.joinable()) return false;
  deadline_ = std::chrono::steady_clock::now();
  if (deadline_idle_) wake_deadline_.notify_one();
  return true;
}

void Stream::submit_now(Lock& lock) {
  translate_vk("submitting", [&] { close_locked(); });
  if (auto failure = submit_queued(lock)) throw *failure;
}

// The batch never ran. Its timeline value is completed from the host, so that no wait for it
// (or for a later value) can hang; what it would have written is marked lost, so that reading
// it raises instead of returning data never computed.
void Stream::abandon_locked(Batch& batch) {
  for (auto& buffer : batch.written) buffer->contents_lost = true;
  try {
    // A host signal must stay below every pending signal: let earlier batches finish first.
    if (!in_flight_.empty()) wait_value(in_flight_.back().value, UINT64_MAX, true);
    retire_locked();
    if (completed_value() < batch.value) {
      vk::SemaphoreSignalInfo signal{.semaphore = **timeline_, .value = batch.value};
      core_->device().signalSemaphore(signal);
    }
    batch.cmd->reset();
    free_cmds_.push_back(std::move(*batch.cmd));
  } catch (...) {
    // The device is lost: nothing more will run, and every later wait reports it.
  }
  ++stats_.failed_submits;
}

uint64_t Stream::completed_value() const {
  uint64_t v = 0;
  VkResult r = core_->device().getDispatcher()->vkGetSemaphoreCounterValue(
      static_cast<VkDevice>(*core_->device()), static_cast<VkSemaphore>(**timeline_), &v);
  if (r != VK_SUCCESS) throw_vk(static_cast<vk::Result>(r), "vkGetSemaphoreCounterValue");
  return v;
}

void Stream::retire_locked() {
  if (in_flight_.empty()) return;
  uint64_t done = completed_value();
  while (!in_flight_.empty() && in_flight_.front().value <= done) {
    Batch b = std::move(in_flight_.front());
    in_flight_.pop_front();
    profiler_.collect(b.queries);
    for (auto* list : {&b.used, &b.written}) {
      list->clear();
      if (free_lists_.size() < 8) free_lists_.push_back(std::move(*list));
    }
    for (auto& block : b.param_blocks)
      if (block->size() == 64 * 1024 && free_param_blocks_.size() < 16) free_param_blocks_.push_back(std::move(block));
    free_cmds_.push_back(std::move(*b.cmd));
  }
}

bool Stream::wait_value(uint64_t value, uint64_t timeout_ns, bool locked) {
  if (value == 0) return true;
  // Polling never outlasts the caller's timeout (a brief wait on a scheduler that must not block).
  auto spin = std::min<std::chrono::nanoseconds>(wait_spin_, std::chrono::nanoseconds(std::min<uint64_t>(timeout_ns, INT64_MAX)));
  if (spin.count() > 0) {
    auto until = std::chrono::steady_clock::now() + spin;
    do {
      if (completed_value() >= value) return true;
    } while (std::chrono::steady_clock::now() < until);
  }
  uint64_t limit_ns = wait_limit_ns_;
  bool limited = limit_ns && timeout_ns > limit_ns;
  vk::Semaphore sem = **timeline_;
  vk::SemaphoreWaitInfo info{.semaphoreCount = 1, .pSemaphores = &sem, .pValues = &value};
  VkResult r = core_->device().getDispatcher()->vkWaitSemaphores(
      static_cast<VkDevice>(*core_->device()), reinterpret_cast<const VkSemaphoreWaitInfo*>(&info),
      limited ? limit_ns : timeout_ns);
  if (r == VK_TIMEOUT && limited) {
    std::string state = "the stream was busy";
    if (locked) {
      state = describe_locked();
    } else if (Lock lock(mutex_, std::try_to_lock); lock.owns_lock()) {
      state = describe_locked();
    }
    throw Error(ErrorKind::Driver, "waited more than NX_VULKAN_WAIT_LIMIT_S for timeline value " +
                                       std::to_string(value) + " (" + state + ")");
  }
  if (r == VK_TIMEOUT) return false;
  if (r == VK_ERROR_DEVICE_LOST) core_->mark_lost();
  if (r != VK_SUCCESS) throw_vk(static_cast<vk::Result>(r), "vkWaitSemaphores");
  return true;
}

std::string Stream::describe_locked() const {
  auto values = [](const auto& batches) {
    std::string out;
    for (const Batch& b : batches) out += (out.empty() ? "" : ",") + std::to_string(b.value);
    return out.empty() ? std::string("none") : out;
  };
  std::string completed, unfinished_trace;
  try {
    uint64_t done = completed_value();
    completed = std::to_string(done);
    for (const Batch& b : in_flight_)
      if (b.value > done) {
        unfinished_trace = "; batch " + std::to_string(b.value) + " holds: " + b.trace;
        break;
      }
  } catch (const std::exception& e) {
    completed = e.what();
  }
  return "completed " + completed + "; in flight " + values(in_flight_) + "; queued " + values(queued_) +
         "; submitting " + (submitting_batch_ ? std::to_string(submitting_batch_->value) : std::string("none")) +
         "; open " +
         (open_ ? std::to_string(open_->value) + " with " + std::to_string(open_->commands) + " commands" +
                      (open_->trace.empty() ? "" : " (" + open_->trace + ")")
                : std::string("none")) +
         "; deadline " + (deadline_ ? "set" : "none") + unfinished_trace;
}

std::string Stream::lost_message() const { return std::string(kContentsLost) + " (" + last_failure_ + ")"; }

bool Stream::wait_for_writes(const Buffer& buffer, uint64_t timeout_ns) {
  uint64_t value;
  {
    Lock lock(mutex_);
    core_->check_not_lost();
    if (buffer.contents_lost) throw Error(ErrorKind::Driver, lost_message());
    value = buffer.last_write_batch;
    if (value == 0) return true;
    // Submitted here rather than by the thread, which would add its wake-up to the wait. A
    // failure shows as this buffer's loss below.
    if (open_ && open_->value == value) translate_vk("submitting", [&] { close_locked(); });
    submit_queued(lock);
    ++stats_.waits;
  }
  if (!wait_value(value, timeout_ns)) return false;
  std::lock_guard lock(mutex_);
  translate_vk("retiring", [&] { retire_locked(); });
  core_->check_not_lost();
  if (buffer.contents_lost) throw Error(ErrorKind::Driver, lost_message());
  return true;
}

bool Stream::idle() {
  std::lock_guard lock(mutex_);
  core_->check_not_lost();
  if ((open_ && open_->commands > 0) || !queued_.empty() || submitting_) return false;
  if (in_flight_.empty()) return true;
  translate_vk("retiring", [&] { retire_locked(); });
  return in_flight_.empty();
}

bool Stream::writes_finished(const Buffer& buffer) {
  std::lock_guard lock(mutex_);
  core_->check_not_lost();
  if (buffer.contents_lost) throw Error(ErrorKind::Driver, lost_message());
  uint64_t value = buffer.last_write_batch;
  if (value == 0) return true;
  if (open_ && open_->value == value) return false;
  for (const Batch& b : queued_)
    if (b.value == value) return false;
  if (submitting_batch_ && submitting_batch_->value == value) return false;
  return translate_vk("polling", [&] { return completed_value() >= value; });
}

void Stream::flush() {
  Lock lock(mutex_);
  submit_now(lock);
}

void Stream::flush_if_dry() {
  Lock lock(mutex_);
  if (!queued_.empty() || submitting_) return;
  if (!in_flight_.empty()) translate_vk("retiring", [&] { retire_locked(); });
  if (in_flight_.empty()) submit_now(lock);
}

void Stream::synchronize() {
  uint64_t value;
  {
    Lock lock(mutex_);
    submit_now(lock);
    value = next_value_ - 1;
  }
  wait_value(value);
  std::lock_guard lock(mutex_);
  translate_vk("retiring", [&] { retire_locked(); });
  core_->check_not_lost();
}

StreamStats Stream::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace nxv
