// The asynchronous stream: no waits while recording, barriers only on hazards, thread safety.
#include <atomic>
#include <chrono>
#include <thread>

#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Eight different elementwise ops (a graph merges repeated nodes): -1 for the first at 1, else 1.
const OpId kEightOps[] = {OpId::negate, OpId::abs, OpId::floor, OpId::ceil,
                          OpId::round,  OpId::sign, OpId::sqrt, OpId::cbrt};

}  // namespace

TEST(Stream, IndependentOpsNeedNoBarrierAndChainsDo) {
  // Each group as one graph, recorded at once: eager ops would each be a batch of their own
  // whenever the device is idle, and a batch's opening barrier is not a counted one.
  auto dev = Device::open();
  auto& stream = dev->impl().stream;
  auto t = upload(*dev, DType::F32, {1000}, std::vector<float>(1000, 1.f));
  dev->synchronize();
  Graph independent, chain;
  uint32_t x = independent.input(DType::F32, {1000});
  for (OpId op : kEightOps) independent.output(independent.add(op, {DType::F32, {1000}}, {x}));
  uint32_t y = chain.input(DType::F32, {1000}), c = y;
  // Each step a graph output too: kept apart (not one fused chain), so each waits for the last.
  for (int i = 0; i < 8; ++i) chain.output(c = chain.add(OpId::add, {DType::F32, {1000}}, {c, y}));
  auto independent_exe = compile_graph(*dev, independent, {t});
  auto chain_exe = compile_graph(*dev, chain, {t});
  auto before = stream.stats();
  auto outs = independent_exe.run(*dev, {t});
  auto mid = stream.stats();
  auto sum = chain_exe.run(*dev, {t});
  auto after = stream.stats();
  EXPECT_EQ(mid.barriers - before.barriers, 0u);
  EXPECT_EQ(after.barriers - mid.barriers, 7u);  // before each add but the first
  EXPECT_EQ(download<float>(*dev, sum.back())[999], 9.f);
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(download<float>(*dev, outs[i])[0], i == 0 ? -1.f : 1.f);
}

TEST(Stream, RecordingDoesNotWaitAndADownloadWaitsOnce) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  auto dev = Device::open();
  auto& stream = dev->impl().stream;
  auto t = upload(*dev, DType::F32, {4096}, std::vector<float>(4096, 2.f));
  auto before = stream.stats();
  Tensor c = t;
  for (int i = 0; i < 200; ++i) c = run_op(*dev, "multiply", {DType::F32, {4096}}, {c, t});
  EXPECT_EQ(stream.stats().waits, before.waits);  // nothing waited while recording
  auto r = download<float>(*dev, c);
  EXPECT_GT(stream.stats().submits, before.submits);
  EXPECT_EQ(stream.stats().waits, before.waits + 1);
  EXPECT_TRUE(std::isinf(r[0]));  // 2^201 overflows f32
}

TEST(Stream, HundredThreadsIssuingOpsAtOnce) {
  auto dev = shared_device();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 100; ++t) {
    threads.emplace_back([&, t] {
      try {
        std::vector<float> a(513, float(t)), b(513, 1.f);
        auto ta = upload(*dev, DType::F32, {513}, a), tb = upload(*dev, DType::F32, {513}, b);
        Tensor c = ta;
        for (int i = 0; i < 20; ++i) c = run_op(*dev, "add", {DType::F32, {513}}, {c, tb});
        auto r = download<float>(*dev, c);
        for (float x : r)
          if (x != float(t + 20)) ++failures;
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Stream, SeveralDevicesAtOnceFromOneProcess) {
  auto a = Device::open(), b = Device::open();
  auto ta = upload(*a, DType::F32, {2}, std::vector<float>{1, 2});
  auto tb = upload(*b, DType::F32, {2}, std::vector<float>{3, 4});
  auto ra = run_op(*a, "add", {DType::F32, {2}}, {ta, ta});
  auto rb = run_op(*b, "add", {DType::F32, {2}}, {tb, tb});
  EXPECT_EQ(download<float>(*a, ra), (std::vector<float>{2, 4}));
  EXPECT_EQ(download<float>(*b, rb), (std::vector<float>{6, 8}));
  // A tensor of one device handed to another is refused, not misread.
  EXPECT_THROW(run_op(*a, "add", {DType::F32, {2}}, {ta, tb}), Error);
}

// A submission the driver refuses (here injected) must not leave a timeline value that is never
// signalled: waits return, what the batch would have written raises when read, and the device
// goes on computing.
TEST(Stream, AFailedSubmissionLosesItsOutputsAndNeverHangs) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  auto dev = Device::open();
  auto& stream = dev->impl().stream;
  auto t = upload(*dev, DType::F32, {1000}, std::vector<float>(1000, 1.f));
  dev->synchronize();
  auto lost = std::make_shared<Buffer>(dev->impl().core, 4000, BufferKind::Device);
  stream.record([&](Recorder& r) { r.use(lost, Access::Write); });  // no command: stays open
  dev->fail_submission(1);
  try {
    stream.flush();
    ADD_FAILURE() << "the injected failure did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vkQueueSubmit2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(stream.stats().failed_submits, 1u);
  try {
    stream.wait_for_writes(*lost);
    ADD_FAILURE() << "reading a lost buffer did not raise";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lost"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stream.record([&](Recorder& r) { r.use(lost, Access::Read); }), Error);
  dev->synchronize();
  EXPECT_EQ(download<float>(*dev, run_op(*dev, "add", {DType::F32, {1000}}, {t, t}))[999], 2.f);

  // An op whose submission fails (on the submitting thread): reading its result raises and
  // names the failure, every time; the next op computes.
  dev->synchronize();
  dev->fail_submission(1);
  Tensor failed = run_op(*dev, "negate", {DType::F32, {1000}}, {t});
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      download<float>(*dev, failed);
      ADD_FAILURE() << "reading the result of a failed submission did not raise";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("lost"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("vkQueueSubmit2"), std::string::npos) << e.what();
    }
  }
  dev->synchronize();
  EXPECT_EQ(download<float>(*dev, run_op(*dev, "negate", {DType::F32, {1000}}, {t}))[0], -1.f);
  EXPECT_EQ(stream.stats().failed_submits, 2u);
}

TEST(Stream, ALostDeviceRaisesOnEveryUseAndANewOneWorks) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  auto dev = Device::open();
  auto t = upload(*dev, DType::F32, {1000}, std::vector<float>(1000, 1.f));
  dev->synchronize();
  dev->fail_submission(1, /*lose_device=*/true);
  Tensor pending = run_op(*dev, "negate", {DType::F32, {1000}}, {t});
  auto expect_lost = [](const auto& call) {
    try {
      call();
      ADD_FAILURE() << "a use of the lost device did not raise";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::DeviceLost) << e.what();
      EXPECT_NE(std::string(e.what()).find("lost"), std::string::npos) << e.what();
    }
  };
  expect_lost([&] { download<float>(*dev, pending); });
  EXPECT_TRUE(dev->lost());
  expect_lost([&] { download<float>(*dev, t); });
  expect_lost([&] { run_op(*dev, "add", {DType::F32, {1000}}, {t, t}); });
  expect_lost([&] { dev->synchronize(); });

  // A new logical device on the same GPU works; the lost one's tensors say what happened.
  auto fresh = Device::open();
  EXPECT_FALSE(fresh->lost());
  auto u = upload(*fresh, DType::F32, {1000}, std::vector<float>(1000, 2.f));
  EXPECT_EQ(download<float>(*fresh, run_op(*fresh, "add", {DType::F32, {1000}}, {u, u}))[999], 4.f);
  expect_lost([&] { run_op(*fresh, "add", {DType::F32, {1000}}, {t, u}); });
}

// Tiny ops on an idle device share a submission while the batch is younger than the deferral,
// and a deferred batch reaches the GPU by its deadline with no later op or wait to submit it.
TEST(Stream, TinyOpsShareADeferredSubmissionThatItsDeadlineSubmits) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  ScopedSettings defer([](Settings& s) { s.submit_defer_us = 2'000'000; });
  auto dev = Device::open();
  auto& stream = dev->impl().stream;
  auto t = upload(*dev, DType::F32, {1000}, std::vector<float>(1000, 1.f));
  dev->synchronize();
  auto before = stream.stats();
  Tensor c = t;
  for (int i = 0; i < 20; ++i) c = run_op(*dev, "add", {DType::F32, {1000}}, {c, t});
  EXPECT_EQ(stream.stats().submits, before.submits);  // all 20 wait in one open batch
  EXPECT_EQ(download<float>(*dev, c)[999], 21.f);     // the download submits it at once
  EXPECT_EQ(stream.stats().submits, before.submits + 1);

  ScopedSettings short_defer([](Settings& s) { s.submit_defer_us = 1000; });
  auto quick = Device::open();
  auto& quick_stream = quick->impl().stream;
  auto u = upload(*quick, DType::F32, {1000}, std::vector<float>(1000, 2.f));
  quick->synchronize();
  auto start = quick_stream.stats();
  Tensor d = run_op(*quick, "negate", {DType::F32, {1000}}, {u});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (quick_stream.stats().submits == start.submits && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(quick_stream.stats().submits, start.submits + 1);  // by the deadline thread
  EXPECT_EQ(quick_stream.stats().waits, start.waits);
  EXPECT_EQ(download<float>(*quick, d)[0], -2.f);
}

// A wait limit (NX_VULKAN_WAIT_LIMIT_S) turns a wait that would never end into an error naming the stream's
// batches and their kernels: here a buffer claims a write by a batch that was never recorded.
TEST(Stream, AWaitPastTheLimitRaisesWithTheStreamsState) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  ScopedSettings limit([](Settings& s) {
    s.wait_limit_s = 1;
    s.submit_defer_us = 60'000'000;  // the op's batch stays open
  });
  auto dev = Device::open();
  auto t = upload(*dev, DType::F32, {16}, std::vector<float>(16, 3.f));
  dev->synchronize();
  Tensor pending = run_op(*dev, "negate", {DType::F32, {16}}, {t});
  uint64_t honest = t.buffer->last_write_batch;
  t.buffer->last_write_batch = honest + 1'000'000;
  auto t0 = std::chrono::steady_clock::now();
  try {
    // The wait for the buffer's writes itself: a GPU's download would first record a copy
    // into host memory and wait for that batch instead.
    dev->impl().stream.wait_for_writes(*t.buffer);
    ADD_FAILURE() << "the wait returned";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("NX_VULKAN_WAIT_LIMIT_S"), std::string::npos) << what;
    EXPECT_NE(what.find("in flight"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(honest + 1'000'000)), std::string::npos) << what;
    EXPECT_NE(what.find("with 1 commands (elementwise"), std::string::npos) << what;  // the open batch's kernel
    EXPECT_NE(what.find("grid 1x1x1"), std::string::npos) << what;
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(900));
  t.buffer->last_write_batch = honest;
  // The device goes on.
  EXPECT_EQ(download<float>(*dev, pending)[15], -3.f);
  EXPECT_EQ(download<float>(*dev, t)[0], 3.f);
}

// NX_VULKAN_BARRIER_ALL=1 (diagnosis): independent ops, which need no barrier, get one anyway,
// and results are unchanged.
TEST(Stream, BarrierAllPutsABarrierBeforeEveryUse) {
  std::vector<Tensor> outs;
  uint64_t barriers = 0;
  {
    ScopedSettings all([](Settings& s) { s.barrier_all = true; });
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {1000}, std::vector<float>(1000, 1.f));
    dev->synchronize();
    Graph independent;
    uint32_t x = independent.input(DType::F32, {1000});
    for (OpId op : kEightOps) independent.output(independent.add(op, {DType::F32, {1000}}, {x}));
    auto exe = compile_graph(*dev, independent, {t});
    auto before = dev->impl().stream.stats();
    outs = exe.run(*dev, {t});
    barriers = dev->impl().stream.stats().barriers - before.barriers;
    for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(download<float>(*dev, outs[i])[0], i == 0 ? -1.f : 1.f);
  }
  EXPECT_GE(barriers, 8u);
  auto plain = Device::open();  // the switch is read when a stream is created: off again
  auto& stream = plain->impl().stream;
  auto u = upload(*plain, DType::F32, {4}, std::vector<float>(4, 2.f));
  plain->synchronize();
  Graph two;
  uint32_t y = two.input(DType::F32, {4});
  for (int i = 0; i < 2; ++i) two.output(two.add(kEightOps[i], {DType::F32, {4}}, {y}));
  auto exe = compile_graph(*plain, two, {u});
  auto before = stream.stats();
  auto r = exe.run(*plain, {u});
  EXPECT_EQ(stream.stats().barriers - before.barriers, 0u);
  EXPECT_EQ(download<float>(*plain, r[1])[3], 2.f);
}

// A command whose later use records a barrier (a read of a buffer written just before) writes
// its outputs after that barrier: the next command that reads one of them needs another. Seen
// on NVIDIA as split-K dots with an epilogue tensor copied first, whose partial sums the second
// pass read while the first still wrote them.
TEST(Stream, AWriteDeclaredBeforeABarrierOfTheSameCommandDatesFromAfterIt) {
  auto dev = Device::open();
  auto& impl = dev->impl();
  auto copied = impl.allocate(256), partial = impl.allocate(256), result = impl.allocate(256);
  dev->synchronize();
  auto before = impl.stream.stats();
  impl.stream.record([&](Recorder& rec) {
    rec.use(copied, Access::Write);  // a copy
    rec.count_command();
    rec.use(partial, Access::Write);  // the first pass: writes the partial sums ...
    rec.use(copied, Access::Read);    // ... and reads the copy: a barrier
    rec.count_command();
    rec.use(partial, Access::Read);  // the second pass: another barrier
    rec.use(result, Access::Write);
    rec.count_command();
  });
  EXPECT_EQ(impl.stream.stats().barriers - before.barriers, 2u);
  dev->synchronize();
}

// NX_VULKAN_PROFILE=1 (read when the device opens): every dispatch is timed under its kernel's
// label, the counts are the dispatches made, and taking the profile starts it again.
TEST(Stream, KernelProfileCountsEveryDispatch) {
  ScopedTuning kernels("ew.host", "0");  // its add records a kernel whenever it comes
  std::shared_ptr<Device> dev;
  {
    ScopedSettings profile([](Settings& s) { s.profile = true; });
    dev = Device::open();
  }
  auto t = upload(*dev, DType::F32, {4096}, std::vector<float>(4096, 0.5f));
  dev->kernel_profile();
  for (int i = 0; i < 5; ++i) t = run_op(*dev, OpId::exp, OutSpec{DType::F32, {4096}}, std::vector<Tensor>{t});
  Tensor s = run_op(*dev, OpId::add, OutSpec{DType::F32, {4096}}, std::vector<Tensor>{t, t});
  auto profile = dev->kernel_profile();
  ASSERT_FALSE(profile.empty());
  uint64_t dispatches = 0;
  double total = 0;
  for (const auto& k : profile) {
    EXPECT_FALSE(k.kernel.empty());
    EXPECT_GE(k.total_ns, 0.0);
    dispatches += k.count;
    total += k.total_ns;
  }
  EXPECT_EQ(dispatches, 6u);
  EXPECT_GT(total, 0.0);
  for (size_t i = 1; i < profile.size(); ++i) EXPECT_GE(profile[i - 1].total_ns, profile[i].total_ns);
  EXPECT_TRUE(dev->kernel_profile().empty());
  EXPECT_EQ(download<float>(*dev, s).size(), 4096u);
  // Without the setting nothing is timed.
  EXPECT_TRUE(shared_device()->kernel_profile().empty());
}
