// Elementwise add (f32) from 1K to 256M elements: bytes moved (2 reads + 1 write) per second
// as a fraction of the copy bandwidth measured in the same run.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

void run_binary(benchmark::State& state, const char* op, DType type) {
  Device& dev = device();
  int64_t n = state.range(0);
  // Two distinct inputs (the same buffer twice would be read from DRAM once), zero-filled so
  // that no NaN or subnormal traffic slows anything.
  Tensor a = run_op(dev, "as_type", {type, {n}}, {empty(dev, DType::U8, {n})});
  a = run_op(dev, "multiply", {type, {n}}, {a, from_host(dev, type, {}, std::vector<char>(dtype_size(type), 0).data(), dtype_size(type))});
  Tensor b = run_op(dev, "negate", {type, {n}}, {a});
  // Several ops per timing so that one submit + wait does not dominate small sizes.
  int per_iter = n >= (16 << 20) ? 10 : 100;
  for (int i = 0; i < 3; ++i) run_op(dev, op, {type, {n}}, {a, b});
  dev.synchronize();
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) run_op(dev, op, {type, {n}}, {a, b});
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  // Rates below are per second of manual time, which covers `per_iter` ops.
  double bytes = 3.0 * double(n) * double(dtype_size(type)) * per_iter;
  state.counters["ops_per_iter"] = per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] = benchmark::Counter(bytes / limits().copy_bytes_per_s,
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AddF32(benchmark::State& state) { run_binary(state, "add", DType::F32); }

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = 1 << 10; n <= max_elements(); n *= 4) b->Arg(n);
}

BENCHMARK(BM_AddF32)->Apply(sizes)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nxv::bench
