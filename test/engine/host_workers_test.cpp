// The host threads that split host steps (exec/host_workers.hpp): every part runs once, callers
// on several threads at once all finish, and a part's exception reaches its caller after every
// part has ended.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "exec/host_workers.hpp"

using namespace nxv;

TEST(HostWorkers, EveryPartRunsOnce) {
  EXPECT_GE(host_parallelism(), 1u);
  for (size_t parts : {0, 1, 2, 3, 7, 64}) {
    std::vector<std::atomic<int>> runs(parts);
    run_host_parts(parts, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < parts; ++i) ASSERT_EQ(runs[i].load(), 1) << "part " << i << " of " << parts;
  }
}

TEST(HostWorkers, CallersOnSeveralThreadsAllFinish) {
  constexpr int kCallers = 6, kCalls = 40;
  std::vector<int64_t> sums(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int call = 0; call < kCalls; ++call) {
        std::vector<int64_t> part_sums(5, 0);
        run_host_parts(part_sums.size(), [&](size_t i) {
          for (int64_t x = 0; x < 1000; ++x) part_sums[i] += x * int64_t(i + 1);
        });
        for (int64_t s : part_sums) sums[size_t(c)] += s;
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[size_t(c)], int64_t(kCalls) * 499500 * 15) << "caller " << c;
}

TEST(HostWorkers, AnExceptionReachesTheCallerAfterEveryPart) {
  std::atomic<int> ended{0};
  try {
    run_host_parts(8, [&](size_t i) {
      ended.fetch_add(1);
      if (i == 2 || i == 5) throw std::runtime_error("part failed");
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "part failed");
  }
  EXPECT_EQ(ended.load(), 8);
  // The pool goes on.
  std::atomic<int> runs{0};
  run_host_parts(4, [&](size_t) { runs.fetch_add(1); });
  EXPECT_EQ(runs.load(), 4);
}
