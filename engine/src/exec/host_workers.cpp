#include "exec/host_workers.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif

namespace nxv {
namespace {

// One run_host_parts call: whoever takes it runs parts until none is left.
struct HostJob {
  const std::function<void(size_t)>* part = nullptr;
  size_t parts = 0;
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::condition_variable finished;
  size_t done = 0;
  std::exception_ptr error;

  void work() {
    for (size_t i; (i = next.fetch_add(1)) < parts;) {
      std::exception_ptr failure;
      try {
        (*part)(i);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mutex);
      if (failure && !error) error = failure;
      if (++done == parts) finished.notify_all();
    }
  }
};

class HostPool {
 public:
  explicit HostPool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~HostPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  size_t threads() const { return threads_.size(); }

  // Offers `job` to `helpers` pool threads.
  void post(const std::shared_ptr<HostJob>& job, size_t helpers) {
    {
      std::lock_guard lock(mutex_);
      for (size_t i = 0; i < helpers; ++i) queue_.push_back(job);
    }
    if (helpers == 1) wake_.notify_one();
    else wake_.notify_all();
  }

 private:
  void loop() {
    for (;;) {
      std::shared_ptr<HostJob> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->work();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<HostJob>> queue_;
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: joined before the rest goes
};

size_t hardware_threads() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return size_t(std::max(CPU_COUNT(&set), 1));
#endif
  return std::max<size_t>(std::thread::hardware_concurrency(), 1);
}

HostPool& host_pool() {
  static HostPool pool(host_parallelism() - 1);
  return pool;
}

}  // namespace

size_t host_parallelism() {
  static const size_t threads = hardware_threads();
  return threads;
}

void run_host_parts(size_t parts, const std::function<void(size_t)>& part) {
  HostPool& pool = host_pool();
  auto job = std::make_shared<HostJob>();
  job->part = &part;
  job->parts = parts;
  if (parts > 1 && pool.threads() > 0) pool.post(job, std::min(parts - 1, pool.threads()));
  job->work();
  std::unique_lock lock(job->mutex);
  job->finished.wait(lock, [&] { return job->done == parts; });
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace nxv
