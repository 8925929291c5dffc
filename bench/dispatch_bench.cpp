// The cost of a small op: synchronous (record, submit, wait each time) and pipelined (ops
// recorded back to back, one wait at the end), against the round-trip floor of the same run.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

#include "device/device_impl.hpp"
#include "device_limits.hpp"
#include "exec/phase_times.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

// With NXV_PHASE_TIMES=1: the host time of each phase of the eager path per op.
void reset_phase_times() {
  for (auto& v : phase_totals().ns) v = 0;
  for (auto& v : phase_totals().calls) v = 0;
}

void report_phase_times(benchmark::State& state, double ops) {
  if (!phase_timing_on()) return;
  for (size_t p = 0; p < size_t(Phase::Count); ++p) {
    std::string name = phase_name(Phase(p));
    state.counters["us_" + name] = double(phase_totals().ns[p]) / 1e3 / ops;
  }
}

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

// Ops recorded back to back, one wait per 1000; the caller busy for `busy_us` before each op,
// as the Elixir side is for each op (the backend and the NIF): whether a slower caller pays
// more per op than that time (fewer ops share each submission).
void run_pipelined(benchmark::State& state, int64_t busy_us) {
  Device& dev = device();
  Tensor a = empty(dev, DType::F32, {1});
  const int per_iter = 1000;
  const auto busy = std::chrono::microseconds(busy_us);
  reset_phase_times();
  uint64_t submits_before = dev.impl().stream.stats().submits;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) {
      auto until = std::chrono::steady_clock::now() + busy;
      while (busy_us && std::chrono::steady_clock::now() < until) {
      }
      Tensor r = run_op(dev, "add", {DType::F32, {1}}, {a, a});
    }
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.counters["us_per_op"] =
      benchmark::Counter(1e6 / per_iter, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  report_phase_times(state, double(state.iterations() * per_iter));
  // Batching: a submission per op means the GPU drained between ops (each op paid a submit).
  state.counters["submits_per_op"] =
      double(dev.impl().stream.stats().submits - submits_before) / double(state.iterations() * per_iter);
}

void BM_SmallOpPipelined(benchmark::State& state) {
  run_pipelined(state, 0);
  state.counters["floor_us"] = limits().round_trip_s * 1e6;
}

void BM_SmallOpPipelinedBusyCaller(benchmark::State& state) { run_pipelined(state, state.range(0)); }

// The GPU's cost of a tiny dispatch (one workgroup copying 256 bytes), 256 in one wait: each
// reading what the one before wrote (range(0) = 1: a barrier before each) or all independent
// (0: no barrier), against the round trip of the same run.
void BM_DependentDispatches(benchmark::State& state) {
  auto& impl = device().impl();
  const bool chained = state.range(0) != 0;
  const int per_iter = 256;
  const uint64_t bytes = 256;
  const Kernel& kernel = impl.kernels.get({"copy_probe", {}, 64});
  std::vector<std::shared_ptr<Buffer>> buffers;
  for (int i = 0; i <= (chained ? 1 : per_iter); ++i) buffers.push_back(impl.allocate(bytes));
  auto run = [&] {
    for (int i = 0; i < per_iter; ++i) {
      auto& src = chained ? buffers[i % 2] : buffers[0];
      auto& dst = chained ? buffers[(i + 1) % 2] : buffers[i + 1];
      struct {
        uint64_t src, dst;
        uint32_t n;
      } push{src->address_at(0), dst->address_at(0), uint32_t(bytes / 16)};
      impl.stream.record([&](Recorder& rec) {
        rec.use(src, Access::Read);
        rec.use(dst, Access::Write);
        rec.cmd().bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
        rec.cmd().pushConstants<decltype(push)>(impl.kernels.layout(), vk::ShaderStageFlagBits::eCompute, 0, push);
        rec.cmd().dispatch(1, 1, 1);
        rec.count_command();
      });
    }
    impl.stream.synchronize();
  };
  warm_up(run);
  uint64_t barriers_before = impl.stream.stats().barriers;
  for (auto _ : state) run();
  state.counters["seconds_per_dispatch"] =
      benchmark::Counter(per_iter, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["barriers_per_dispatch"] =
      double(impl.stream.stats().barriers - barriers_before) / double(state.iterations() * per_iter);
  state.counters["floor_us"] = limits().round_trip_s * 1e6;
}

BENCHMARK(BM_DependentDispatches)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_SmallOpSynchronous)->UseRealTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_SmallOpPipelined)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_SmallOpPipelinedBusyCaller)->Arg(2)->Arg(5)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);

}  // namespace
}  // namespace nxv::bench
