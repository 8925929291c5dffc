#include "device/submit_exclusion.hpp"

namespace nxv {

SubmitExclusion::Creation::Creation(SubmitExclusion& e) : e_(e) {
  if (!e_.enabled_) return;
  std::unique_lock lock(e_.mutex_);
  e_.changed_.wait(lock, [&] { return e_.submitters_ == 0; });
  ++e_.creating_;
}

SubmitExclusion::Creation::~Creation() {
  if (!e_.enabled_) return;
  {
    std::lock_guard lock(e_.mutex_);
    --e_.creating_;
  }
  e_.changed_.notify_all();
}

SubmitExclusion::Submission::Submission(SubmitExclusion& e, bool may_block) : e_(e) {
  if (!e_.enabled_) {
    owns_ = true;
    return;
  }
  std::unique_lock lock(e_.mutex_);
  if (e_.creating_ > 0 && !may_block) return;
  ++e_.submitters_;
  e_.changed_.wait(lock, [&] { return e_.creating_ == 0; });
  owns_ = true;
}

SubmitExclusion::Submission::~Submission() {
  if (!e_.enabled_ || !owns_) return;
  {
    std::lock_guard lock(e_.mutex_);
    --e_.submitters_;
  }
  e_.changed_.notify_all();
}

}  // namespace nxv
