// Reductions and scans at the sizes of ../shared/anchors/jax_ops.py's reduce section: bytes read per
// second (JAX's figure is the same: input bytes / time) and that as a fraction of the copy
// bandwidth measured in the same run (a read-only op may pass 1: copy counts read + write).
// BM_SumAccuracy prints the relative error of the f32 sum of N values in [0, 1) against the
// sum in double on the host.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/reduce/reduce_attrs.hpp"

namespace nxv::bench {
namespace {

std::vector<float> host_values(int64_t n) {
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float x = float(i % 65521) * 0.618034f + 0.25f;
    host[size_t(i)] = x - std::floor(x);
  }
  return host;
}

Tensor values(Device& dev, DType type, const Shape& shape) {
  int64_t n = shape_size(shape);
  auto host = host_values(n);
  Tensor x = from_host(dev, DType::F32, shape, host.data(), host.size() * sizeof(float));
  return type == DType::F32 ? x : run_op(dev, "as_type", {type, shape}, {x});
}

Attrs reduce_axes(std::vector<int64_t> axes) {
  ReduceAttrs a;
  a.all_axes = axes.empty();
  a.axes = std::move(axes);
  return Attrs::of(a);
}

void run_reduce(benchmark::State& state, const char* op, DType type, Shape shape, Attrs attrs, OutSpec out,
                double bytes_per_element = 0) {
  Device& dev = device();
  if (shape_size(shape) > max_elements()) {
    state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
    return;
  }
  Tensor x = values(dev, type, shape);
  OpId id = *find_op(op);
  int per_iter = 10;
  warm_up([&] { run_op(dev, id, out, {x}, attrs); });
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) run_op(dev, id, out, {x}, attrs);
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (bytes_per_element == 0) bytes_per_element = double(dtype_size(type));
  double bytes = double(shape_size(shape)) * bytes_per_element * per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
}

constexpr int64_t k256M = 1 << 28;
constexpr int64_t k16K = 1 << 14;

void BM_SumAllF32(benchmark::State& s) { run_reduce(s, "sum", DType::F32, {k256M}, reduce_axes({}), {DType::F32, {}}); }
void BM_SumLastAxisF32(benchmark::State& s) {
  run_reduce(s, "sum", DType::F32, {k16K, k16K}, reduce_axes({1}), {DType::F32, {k16K}});
}
void BM_SumFirstAxisF32(benchmark::State& s) {
  run_reduce(s, "sum", DType::F32, {k16K, k16K}, reduce_axes({0}), {DType::F32, {k16K}});
}
void BM_ArgmaxLastAxisF32(benchmark::State& s) {
  ArgReduceAttrs a;
  a.axis = 1;
  run_reduce(s, "argmax", DType::F32, {k16K, k16K}, Attrs::of(a), {DType::S32, {k16K}});
}
void BM_SumAllF64(benchmark::State& s) { run_reduce(s, "sum", DType::F64, {k256M}, reduce_axes({}), {DType::F64, {}}); }
void BM_ReduceMaxLastAxisF32(benchmark::State& s) {
  run_reduce(s, "reduce_max", DType::F32, {k16K, k16K}, reduce_axes({1}), {DType::F32, {k16K}});
}

// JAX's count: 8 bytes per f32 element (read and written).
void BM_CumsumLastAxisF32(benchmark::State& s) {
  CumulativeAttrs a;
  a.axis = 1;
  run_reduce(s, "cumulative_sum", DType::F32, {k16K, k16K}, Attrs::of(a), {DType::F32, {k16K, k16K}}, 8.0);
}

void BM_SumAccuracy(benchmark::State& state) {
  Device& dev = device();
  int64_t n = state.range(0);
  auto host = host_values(n);
  double exact = 0;
  for (float v : host) exact += double(v);
  Tensor x = from_host(dev, DType::F32, {n}, host.data(), host.size() * sizeof(float));
  float got = 0;
  for (auto _ : state) {
    Tensor r = run_op(dev, "sum", {DType::F32, {}}, {x}, reduce_axes({}));
    to_host(dev, r, &got, sizeof got);
  }
  state.counters["rel_err"] = std::abs(double(got) - exact) / exact;
  state.counters["f32_eps"] = 0x1p-24;
}

void accuracy_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = 1 << 20; n <= max_elements(); n *= 16) b->Arg(n);
}

#define NXV_REDUCE_BENCH(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMicrosecond)
NXV_REDUCE_BENCH(BM_SumAllF32);
NXV_REDUCE_BENCH(BM_SumLastAxisF32);
NXV_REDUCE_BENCH(BM_SumFirstAxisF32);
NXV_REDUCE_BENCH(BM_ArgmaxLastAxisF32);
NXV_REDUCE_BENCH(BM_SumAllF64);
NXV_REDUCE_BENCH(BM_ReduceMaxLastAxisF32);
NXV_REDUCE_BENCH(BM_CumsumLastAxisF32);
BENCHMARK(BM_SumAccuracy)->Apply(accuracy_sizes)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nxv::bench
