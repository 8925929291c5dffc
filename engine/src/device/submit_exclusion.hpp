// Keeps pipeline creation and queue submission of one device apart, where the driver needs it.
// On NVIDIA's driver (580, H200), a compute pipeline created while another thread submits can
// leave that submission's work unfinished forever (bench/RESULTS.md). Creations run
// alongside each other; a submission waits for those under way, and a creation waits while a
// submission runs or waits (submissions go first: the GPU must not idle behind compiles).
#pragma once
#include <condition_variable>
#include <mutex>

namespace nxv {

class SubmitExclusion {
 public:
  explicit SubmitExclusion(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  // Held while a pipeline is created.
  class Creation {
   public:
    explicit Creation(SubmitExclusion& e);
    ~Creation();
    Creation(const Creation&) = delete;
    Creation& operator=(const Creation&) = delete;

   private:
    SubmitExclusion& e_;
  };

  // Held while a submission runs. `may_block`: wait for creations under way; otherwise the
  // submission is not admitted while one is (owns() is false) and the caller submits later.
  class Submission {
   public:
    Submission(SubmitExclusion& e, bool may_block);
    ~Submission();
    Submission(const Submission&) = delete;
    Submission& operator=(const Submission&) = delete;
    bool owns() const { return owns_; }

   private:
    SubmitExclusion& e_;
    bool owns_ = false;
  };

 private:
  const bool enabled_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int creating_ = 0;
  int submitters_ = 0;  // running or waiting
};

}  // namespace nxv
