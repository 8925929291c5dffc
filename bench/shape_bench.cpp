// Movement ops at the sizes of ../shared/anchors/jax_ops.py's move section, counting bytes
// read + written once (JAX's figure counts the same), and that as a fraction of the copy
// bandwidth measured in the same run.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/shape/shape_attrs.hpp"

namespace nxv::bench {
namespace {

Tensor ramp(Device& dev, const Shape& shape) {
  std::vector<float> host(size_t(shape_size(shape)));
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 1000);
  return from_host(dev, DType::F32, shape, host.data(), host.size() * sizeof(float));
}

void run_timed(benchmark::State& state, double bytes_per_call, const std::function<void()>& call) {
  Device& dev = device();
  int per_iter = 10;
  warm_up(call);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) call();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double bytes = bytes_per_call * per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TransposeF32(benchmark::State& state) {
  int64_t n = state.range(0);
  if (n * n > max_elements()) return state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
  Device& dev = device();
  Tensor x = ramp(dev, {n, n});
  ShapeAttrs a;
  a.axes = {1, 0};
  Attrs attrs = Attrs::of(a);
  OpId op = *find_op("transpose");
  run_timed(state, 8.0 * double(n * n), [&] { run_op(dev, op, {DType::F32, {n, n}}, {x}, attrs); });
}

void BM_Concatenate4F32(benchmark::State& state) {
  int64_t part = state.range(0);
  if (4 * part > max_elements()) return state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
  Device& dev = device();
  std::vector<Tensor> parts;
  for (int i = 0; i < 4; ++i) parts.push_back(ramp(dev, {part}));
  ShapeAttrs a;
  a.axis = 0;
  Attrs attrs = Attrs::of(a);
  OpId op = *find_op("concatenate");
  run_timed(state, 8.0 * double(4 * part), [&] { run_op(dev, op, {DType::F32, {4 * part}}, parts, attrs); });
}

#define NXV_SHAPE_BENCH(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMicrosecond)
NXV_SHAPE_BENCH(BM_TransposeF32)->Arg(8192)->Arg(2048);
NXV_SHAPE_BENCH(BM_Concatenate4F32)->Arg(64 << 20)->Arg(4 << 20);

}  // namespace
}  // namespace nxv::bench
