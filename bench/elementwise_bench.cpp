// Elementwise add (f32) from 1K to 256M elements: bytes moved (2 reads + 1 write) per second
// as a fraction of the copy bandwidth measured in the same run.
#include <benchmark/benchmark.h>

#include <chrono>

#include "device_limits.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

void run_binary(benchmark::State& state, const char* op, DType type) {
  Device& dev = device();
  int64_t n = state.range(0);
  Tensor a = empty(dev, type, {n}), b = empty(dev, type, {n});
  Tensor zero = run_op(dev, "subtract", {type, {n}}, {a, a});  // defined values, no NaN traffic
  a = zero;
  b = zero;
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
