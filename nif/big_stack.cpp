#include "big_stack.hpp"

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>

namespace nxv_nif {
namespace {

struct Task {
  const std::function<void()>* work;
  std::promise<void> done;
};

class BigStackThreads {
 public:
  void run(const std::function<void()>& work) {
    Task task{&work, {}};
    std::future<void> done = task.done.get_future();
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(&task);
      // A thread per waiting task: callers (dirty schedulers) never queue behind each other.
      if (queue_.size() > idle_) std::thread([this] { loop(); }).detach();
      else wake_.notify_one();
    }
    done.get();
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return !queue_.empty(); });
      --idle_;
      Task* task = queue_.front();
      queue_.pop_front();
      lock.unlock();
      try {
        (*task->work)();
        task->done.set_value();
      } catch (...) {
        task->done.set_exception(std::current_exception());
      }
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task*> queue_;
  size_t idle_ = 0;
};

}  // namespace

void on_big_stack(const std::function<void()>& work) {
  // Never destroyed: its detached threads wait on it until the process ends.
  static BigStackThreads* threads = new BigStackThreads;
  threads->run(work);
}

}  // namespace nxv_nif
