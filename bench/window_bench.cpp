// Window ops at the sizes of ../shared/anchors/jax_ops.py's window section, with JAX's byte
// count (input read + output written, 8 bytes per f32 element of the input): window_max 3x3,
// stride 1, SAME padding, and the 2x2 stride-2 max-pool gradient (window_scatter_max), on
// 64x256x56x56 f32.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/window/window_attrs.hpp"

namespace nxv::bench {
namespace {

const Shape kShape{64, 256, 56, 56};

Tensor normalish(Device& dev, const Shape& shape) {
  int64_t n = shape_size(shape);
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[size_t(i)] = std::sin(float(i % 65521) * 0.618034f) * 2.0f;
  return from_host(dev, DType::F32, shape, host.data(), host.size() * sizeof(float));
}

void timed(benchmark::State& state, const std::function<void()>& op, double bytes) {
  Device& dev = device();
  int per_iter = 10;
  warm_up(op);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) op();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.counters["GB/s"] = benchmark::Counter(bytes * per_iter / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes * per_iter / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_WindowMax3x3(benchmark::State& state) {
  Device& dev = device();
  Tensor x = normalish(dev, kShape);
  WindowAttrs a{{1, 1, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}}};
  Attrs attrs = Attrs::of(a);
  OpId op = *find_op("window_max");
  timed(state, [&] { run_op(dev, op, {DType::F32, kShape}, {x}, attrs); }, 8.0 * double(shape_size(kShape)));
}

void BM_MaxPoolGradient2x2(benchmark::State& state) {
  Device& dev = device();
  Tensor x = normalish(dev, kShape);
  Shape pooled{64, 256, 28, 28};
  std::vector<float> ones(size_t(shape_size(pooled)), 1.0f);
  Tensor source = from_host(dev, DType::F32, pooled, ones.data(), ones.size() * sizeof(float));
  float zero = 0;
  Tensor init = from_host(dev, DType::F32, {}, &zero, sizeof zero);
  WindowAttrs a{{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 1, 1}, {{0, 0}, {0, 0}, {0, 0}, {0, 0}}};
  Attrs attrs = Attrs::of(a);
  OpId op = *find_op("window_scatter_max");
  timed(state, [&] { run_op(dev, op, {DType::F32, kShape}, {x, source, init}, attrs); },
        8.0 * double(shape_size(kShape)));
}

BENCHMARK(BM_WindowMax3x3)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaxPoolGradient2x2)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nxv::bench
