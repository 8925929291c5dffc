// SubmitExclusion: pipeline creation and queue submission kept apart where the driver needs it,
// and a stream that keeps running (without blocking callers that may not block) meanwhile.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "device/device_impl.hpp"
#include "device/submit_exclusion.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;
using namespace std::chrono_literals;

namespace {

// Polls `flag` for up to `limit`: whether it became true.
bool becomes_true(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 2000ms) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!flag.load() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  return flag.load();
}

}  // namespace

TEST(SubmitExclusion, DisabledAdmitsEverythingAtOnce) {
  SubmitExclusion off(false);
  SubmitExclusion::Creation creating(off);
  SubmitExclusion::Submission submitting(off, false);
  EXPECT_TRUE(submitting.owns());
}

TEST(SubmitExclusion, CreationsShareButASubmissionWaitsForThem) {
  SubmitExclusion on(true);
  std::optional<SubmitExclusion::Creation> first(std::in_place, on);
  {
    SubmitExclusion::Creation second(on);  // a second creation does not wait for the first
    SubmitExclusion::Submission refused(on, false);
    EXPECT_FALSE(refused.owns());
  }
  std::atomic<bool> admitted{false};
  std::thread submitter([&] {
    SubmitExclusion::Submission s(on, true);
    EXPECT_TRUE(s.owns());
    admitted = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(admitted.load());  // still creating
  first.reset();
  EXPECT_TRUE(becomes_true(admitted));
  submitter.join();
}

TEST(SubmitExclusion, AWaitingSubmissionGoesBeforeNewCreations) {
  SubmitExclusion on(true);
  std::optional<SubmitExclusion::Creation> running(std::in_place, on);
  std::atomic<bool> submitted{false}, created{false}, created_before_submission{false};
  std::thread submitter([&] {
    SubmitExclusion::Submission s(on, true);
    std::this_thread::sleep_for(20ms);  // a creation admitted meanwhile would show below
    created_before_submission = created.load();
    submitted = true;
  });
  std::this_thread::sleep_for(30ms);  // the submitter is waiting now
  std::thread creator([&] {
    SubmitExclusion::Creation c(on);
    created = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(created.load());  // held back by the waiting submission
  running.reset();
  EXPECT_TRUE(becomes_true(submitted));
  EXPECT_TRUE(becomes_true(created));
  EXPECT_FALSE(created_before_submission.load());
  submitter.join();
  creator.join();
}

// With the exclusion on, a full batch recorded by a caller that may not block (a BEAM normal
// scheduler: CompileFreeScope) while a pipeline is being created goes to the deadline thread,
// which submits it once the creation ends; a blocking caller waits for it.
TEST(SubmitExclusion, AStreamHandsItsBatchToItsThreadWhileAPipelineIsCreated) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  ScopedSettings on([](Settings& s) { s.submit_exclusion = true; });
  auto dev = Device::open();
  auto& impl = dev->impl();
  ASSERT_TRUE(impl.core->submit_exclusion().enabled());
  auto x = upload(*dev, DType::F32, {100}, std::vector<float>(100, 2.f));
  Tensor warm = run_op(*dev, "negate", {DType::F32, {100}}, {x});  // compiled before the scope
  dev->synchronize();
  auto before = impl.stream.stats();
  std::vector<Tensor> outs;
  {
    std::optional<SubmitExclusion::Creation> creating(std::in_place, impl.core->submit_exclusion());
    auto t0 = std::chrono::steady_clock::now();
    {
      CompileFreeScope may_not_block;
      for (int i = 0; i < 70; ++i) outs.push_back(run_op(*dev, "negate", {DType::F32, {100}}, {x}));  // fills a batch
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(impl.stream.stats().submits, before.submits);  // nothing submitted while creating
    std::atomic<bool> synced{false};
    std::thread waiter([&] {
      dev->synchronize();
      synced = true;
    });
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(synced.load());
    creating.reset();
    EXPECT_TRUE(becomes_true(synced));
    waiter.join();
  }
  EXPECT_GE(impl.stream.stats().submits, before.submits + 2);
  for (auto& out : outs) EXPECT_EQ(download<float>(*dev, out)[99], -2.f);
}
