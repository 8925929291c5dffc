// The cost of a small op: synchronous (record, submit, wait each time) and pipelined (ops
// recorded back to back, one wait at the end), against the round-trip floor of the same run.
#include <benchmark/benchmark.h>

#include <chrono>

#include "device/device_impl.hpp"
#include "device_limits.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

void BM_SmallOpSynchronous(benchmark::State& state) {
  Device& dev = device();
  Tensor a = empty(dev, DType::F32, {1});
  for (auto _ : state) {
    Tensor r = run_op(dev, "add", {DType::F32, {1}}, {a, a});
    dev.synchronize();
  }
  state.counters["us_per_op"] =
      benchmark::Counter(1e6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["floor_us"] = limits().round_trip_s * 1e6;
}

void BM_SmallOpPipelined(benchmark::State& state) {
  Device& dev = device();
  Tensor a = empty(dev, DType::F32, {1});
  const int per_iter = 1000;
  uint64_t submits_before = dev.impl().stream.stats().submits;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) Tensor r = run_op(dev, "add", {DType::F32, {1}}, {a, a});
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.counters["us_per_op"] =
      benchmark::Counter(1e6 / per_iter, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  // Batching: a submission per op means the GPU drained between ops (each op paid a submit).
  state.counters["submits_per_op"] =
      double(dev.impl().stream.stats().submits - submits_before) / double(state.iterations() * per_iter);
  state.counters["floor_us"] = limits().round_trip_s * 1e6;
}

BENCHMARK(BM_SmallOpSynchronous)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_SmallOpPipelined)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);

}  // namespace
}  // namespace nxv::bench
