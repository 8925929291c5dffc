// Indexing as ../shared/anchors/jax_ops.py's move section measures it: take 16M rows of 64 f32
// (a 4 GiB result, over one buffer chunk: written chunk by chunk) from a table of 1M rows (JAX
// counts 2 x 4 x 64 bytes per row plus the 4-byte index); 4M and 256K rows too.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/index/index_attrs.hpp"

namespace nxv::bench {
namespace {

void BM_TakeRowsF32(benchmark::State& state) {
  int64_t rows = state.range(0), table_rows = 1 << 20, width = 64;
  if (rows * 4 > max_elements()) return state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
  Device& dev = device();
  std::vector<float> table(size_t(table_rows * width));
  for (size_t i = 0; i < table.size(); ++i) table[i] = float(i % 977);
  std::vector<int32_t> idx(static_cast<size_t>(rows));
  uint32_t x = 12345;
  for (auto& v : idx) x = x * 1664525u + 1013904223u, v = int32_t((x >> 8) % uint32_t(table_rows));
  Tensor t = from_host(dev, DType::F32, {table_rows, width}, table.data(), table.size() * 4);
  Tensor i = from_host(dev, DType::S32, {rows}, idx.data(), idx.size() * 4);
  IndexAttrs a;
  a.axis = 0;
  Attrs attrs = Attrs::of(a);
  OpId op = *find_op("take");
  OutSpec out{DType::F32, {rows, width}};
  auto call = [&] { run_op(dev, op, out, {t, i}, attrs); };
  int per_iter = int(state.range(1));
  warm_up(call);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < per_iter; ++k) call();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double bytes = double(rows) * (2.0 * 4 * width + 4) * per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
}

// Second argument: takes recorded per synchronization. Ten 4 GiB results in flight outrun the
// buffer cache (16 GiB on an 80 GiB GPU), and each miss allocates device memory.
BENCHMARK(BM_TakeRowsF32)->Args({1 << 24, 2})->Args({1 << 24, 10})->Args({1 << 22, 10})->Args({1 << 18, 10})->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nxv::bench
