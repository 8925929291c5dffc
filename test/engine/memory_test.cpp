// Buffers: statistics, shared ownership across in-flight work, out-of-memory recovery (the
// driver's and a run-time limit's),
// tensors spanning several VkBuffers, exact bytes through transfers.
#include <limits>
#include <random>

#include "device/device_impl.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

TEST(Memory, StatisticsFollowAllocationsAndPeakResets) {
  auto dev = Device::open();
  auto base = dev->memory_stats();
  {
    Tensor a = empty(*dev, DType::F32, {1024});
    Tensor b = empty(*dev, DType::U8, {10});
    auto s = dev->memory_stats();
    EXPECT_EQ(s.bytes_in_use, base.bytes_in_use + 4096 + 10);
    EXPECT_EQ(s.buffers, base.buffers + 2);
    EXPECT_GE(s.peak_bytes, s.bytes_in_use);
  }
  dev->synchronize();
  auto after = dev->memory_stats();
  EXPECT_EQ(after.bytes_in_use, base.bytes_in_use);
  EXPECT_EQ(after.buffers, base.buffers);
  EXPECT_GE(after.peak_bytes, base.bytes_in_use + 4106);
  dev->reset_peak_memory();
  EXPECT_EQ(dev->memory_stats().peak_bytes, after.bytes_in_use);
}

TEST(Memory, BufferCacheMakesRoomForTheSizesInUseNow) {
  auto dev = Device::open({.heap_limit = 64ull << 20});  // cache limit: a quarter of it, 16 MiB
  const int64_t mib = 1 << 20;
  {
    std::vector<Tensor> phase_one;
    for (int i = 0; i < 4; ++i) phase_one.push_back(empty(*dev, DType::U8, {4 * mib}));
  }
  EXPECT_EQ(dev->memory_stats().cached_bytes, uint64_t(16 * mib));
  // A new size once the cache is full: the oldest 4 MiB buffer goes, the 1 MiB one is kept...
  { Tensor t = empty(*dev, DType::U8, {mib}); }
  EXPECT_EQ(dev->memory_stats().cached_bytes, uint64_t(13 * mib));
  // ...and serves the next request of its size.
  Tensor again = empty(*dev, DType::U8, {mib});
  EXPECT_EQ(dev->memory_stats().cached_bytes, uint64_t(12 * mib));
  // A buffer larger than the whole cache is freed, not cached.
  { Tensor big = empty(*dev, DType::U8, {32 * mib}); }
  EXPECT_EQ(dev->memory_stats().cached_bytes, uint64_t(12 * mib));
}

TEST(Memory, TransfersKeepEveryBitIncludingNaNPayloadsAndNegativeZero) {
  auto dev = shared_device();
  std::vector<uint32_t> bits = {0x7FC00001u, 0xFF800000u, 0x80000000u, 0x7F800001u, 0x00000001u, 0x3F800000u};
  auto t = upload(*dev, DType::F32, {6}, bits);
  EXPECT_EQ(download<uint32_t>(*dev, t), bits);
  // A copy through a strided view keeps bits too (it never goes through float arithmetic).
  auto v = download<uint32_t>(*dev, slice_view(t, {0}, {3}, {2}));
  EXPECT_EQ(v, (std::vector<uint32_t>{bits[0], bits[2], bits[4]}));
}

TEST(Memory, HandleDroppedWhileAKernelStillReadsIt) {
  auto dev = shared_device();
  const int64_t n = 1 << 22;
  std::vector<float> a(n, 1.5f), b(n, 2.0f);
  Tensor out;
  {
    Tensor ta = upload(*dev, DType::F32, {n}, a), tb = upload(*dev, DType::F32, {n}, b);
    out = run_op(*dev, "add", {DType::F32, {n}}, {ta, tb});
    out = run_op(*dev, "multiply", {DType::F32, {n}}, {out, ta});
    // ta, tb and the first result go out of scope while the GPU may still be reading them.
  }
  auto r = download<float>(*dev, out);
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(r[i], 3.5f * 1.5f);
}

// A tensor dropped while recorded work still reads it: where the buffer cache could not keep
// it and the next buffer of its size class both, that next allocation takes its memory at once
// (stream order), and runs after that work (a write-after-read barrier where both are in one
// batch); host access to the new tensor waits for both.
TEST(Memory, DroppedBuffersAreReusedInStreamOrder) {
  // A fresh cache (this size class is in none) of 16 MiB: two 9 MiB buffers do not fit.
  auto dev = Device::open({.heap_limit = 64ull << 20});
  auto base = dev->memory_stats();
  const int64_t n = (9 << 20) / 4 - 1237;
  std::mt19937 rng(sample_seed());
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = u(rng);
  for (auto& v : y) v = u(rng);
  Tensor tx = upload(*dev, DType::F32, {n}, x), ty = upload(*dev, DType::F32, {n}, y);
  std::vector<Tensor> kept;
  std::vector<VkDeviceAddress> dropped_at;
  uint64_t buffers_before = 0;
  for (int round = 0; round < 3; ++round) {
    Tensor a = run_op(*dev, "negate", {DType::F32, {n}}, {round % 2 ? ty : tx});
    kept.push_back(run_op(*dev, "add", {DType::F32, {n}}, {a, a}));  // reads a after it
    dropped_at.push_back(a.buffer->address_at(0));
    if (round == 0) buffers_before = dev->memory_stats().buffers;
  }  // each round's `a` is dropped while the add that reads it may not have run
  // From the second round on, `a` took the memory of the round before's (or came from the
  // cache once that work had finished): no round allocated more than the first.
  EXPECT_LE(dev->memory_stats().buffers, buffers_before + 2);
  for (int round = 1; round < 3; ++round) EXPECT_EQ(dropped_at[round], dropped_at[0]) << round;
  Tensor b = run_op(*dev, "multiply", {DType::F32, {n}}, {ty, ty});
  EXPECT_EQ(b.buffer->address_at(0), dropped_at[0]);
  for (int round = 0; round < 3; ++round) {
    auto r = download<float>(*dev, kept[round]);
    const auto& src = round % 2 ? y : x;
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(r[i], -2 * src[i]) << round << " " << i;
  }
  auto rb = download<float>(*dev, b);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(rb[i], y[i] * y[i]) << i;
  // Turned into memory in use again, then freed: the statistics balance.
  kept.clear();
  b = Tensor{};
  tx = ty = Tensor{};
  dev->synchronize();
  EXPECT_EQ(dev->memory_stats().bytes_in_use, base.bytes_in_use);
  EXPECT_EQ(dev->memory_stats().buffers, base.buffers);
}

TEST(Memory, OutOfMemoryIsATypedErrorAndTheDeviceStaysUsable) {
  auto dev = Device::open({.heap_limit = 64ull << 20});
  std::vector<Tensor> held;
  bool hit = false;
  try {
    for (int i = 0; i < 64; ++i) held.push_back(empty(*dev, DType::F32, {4 << 20}));  // 16 MiB each
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos);
    hit = true;
  }
  ASSERT_TRUE(hit);
  EXPECT_LE(held.size(), 4u);
  held.clear();
  auto t = upload(*dev, DType::F32, {3}, std::vector<float>{1, 2, 3});
  auto r = download<float>(*dev, run_op(*dev, "add", {DType::F32, {3}}, {t, t}));
  EXPECT_EQ(r, (std::vector<float>{2, 4, 6}));
  // Memory held only by finished work is reclaimed before an allocation gives up.
  for (int i = 0; i < 16; ++i) {
    Tensor big = empty(*dev, DType::F32, {4 << 20});
    run_op(*dev, "negate", {DType::F32, {4 << 20}}, {big});
  }
}

// A memory limit set at run time: allocations past it are OutOfMemory naming the limit, after
// finished work has released the buffers of dropped tensors; the device goes on; 0 lifts it.
TEST(Memory, ARunTimeLimitIsOutOfMemoryAndTheDeviceGoesOn) {
  auto dev = Device::open();
  dev->synchronize();
  uint64_t limit = dev->memory_stats().bytes_in_use + (1 << 20);
  dev->set_memory_limit(limit);
  EXPECT_EQ(dev->memory_stats().memory_limit, limit);
  Tensor kept = empty(*dev, DType::F32, {128 << 10});  // 512 KiB: fits
  try {
    empty(*dev, DType::F32, {256 << 10});  // 1 MiB more: does not
    ADD_FAILURE() << "allocated past the memory limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
    EXPECT_NE(std::string(e.what()).find("memory limit of " + std::to_string(limit)), std::string::npos) << e.what();
  }
  // Dropped tensors whose buffers queued work still holds count until it finishes.
  for (int i = 0; i < 8; ++i) {
    Tensor t = empty(*dev, DType::F32, {64 << 10});
    run_op(*dev, "negate", {DType::F32, {64 << 10}}, {t});
  }
  auto t = upload(*dev, DType::F32, {3}, std::vector<float>{1, 2, 3});
  EXPECT_EQ(download<float>(*dev, run_op(*dev, "add", {DType::F32, {3}}, {t, t})), (std::vector<float>{2, 4, 6}));
  dev->set_memory_limit(0);
  EXPECT_EQ(dev->memory_stats().memory_limit, 0u);
  Tensor big = empty(*dev, DType::F32, {1 << 20});
  EXPECT_EQ(big.size(), 1 << 20);
}

TEST(Memory, TensorsSpanningSeveralBuffers) {
  // 64 KiB buffers force multi-chunk tensors at test sizes; the same path serves > 4 GiB.
  auto dev = Device::open({.max_chunk_bytes = 64 << 10});
  ASSERT_EQ(dev->impl().core->chunk_bytes(), 64u << 10);
  const int64_t n = 100003;  // ~6 f32 chunks, ~2 u8 chunks, not a multiple of anything
  std::vector<float> a(n);
  std::vector<uint8_t> b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = float(i) * 0.5f;
    b[i] = uint8_t(i * 7);
  }
  auto ta = upload(*dev, DType::F32, {n}, a);
  auto tb = upload(*dev, DType::U8, {n}, b);
  EXPECT_EQ(download<float>(*dev, ta), a);
  auto sum = download<float>(*dev, run_op(*dev, "add", {DType::F32, {n}}, {ta, tb}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], a[i] + float(b[i])) << i;
  auto cast = download<uint8_t>(*dev, run_op(*dev, "as_type", {DType::U8, {n}}, {ta}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(cast[i], uint8_t(int64_t(a[i]))) << i;
  // Broadcast of a small operand over a multi-chunk output goes through the strided path.
  auto row = upload(*dev, DType::F32, {1, 7}, std::vector<float>{1, 2, 3, 4, 5, 6, 7});
  auto m = upload(*dev, DType::F32, {n / 7 + 1, 7}, std::vector<float>(size_t((n / 7 + 1) * 7), 10.f));
  auto bm = download<float>(*dev, run_op(*dev, "multiply", {DType::F32, {n / 7 + 1, 7}}, {m, row}));
  for (size_t i = 0; i < bm.size(); ++i) ASSERT_EQ(bm[i], 10.f * float(i % 7 + 1)) << i;
}

TEST(Memory, ElementCountsAboveTwoToTheThirtyOne) {
  // 2^31 + 65 u8 elements: above the signed 32-bit range and over several chunks of 1 GiB.
  auto dev = Device::open({.max_chunk_bytes = 1ull << 30});
  const int64_t n = (1ll << 31) + 65;
  std::vector<uint8_t> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += 1) a[size_t(i)] = uint8_t(i % 251);
  auto ta = upload(*dev, DType::U8, {n}, a);
  auto one = upload(*dev, DType::U8, {}, std::vector<uint8_t>{1});
  Tensor out = run_op(*dev, "add", {DType::U8, {n}}, {ta, one});
  ta = Tensor{};
  std::vector<uint8_t>().swap(a);
  auto r = download<uint8_t>(*dev, out);
  for (int64_t i = 0; i < n; i += 1 + (i % 997)) ASSERT_EQ(r[size_t(i)], uint8_t(i % 251 + 1)) << i;
  ASSERT_EQ(r[size_t(n - 1)], uint8_t((n - 1) % 251 + 1));
}
