// Elementwise ops from 1K to 256M elements: bytes moved (inputs read + output written) per
// second as a fraction of the copy bandwidth measured in the same run. Binary ops on f32, f16
// and bf16; unary (transcendental) ops on the same types.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

constexpr float kScale = 0.618034f;
constexpr float kOffsets[] = {0.25f, 0.5f};

// Inputs of `type` with values in [0, 1) (no NaN, infinity or subnormal traffic); distinct
// buffers (the same buffer twice would be read from DRAM once). Made once per (type, size,
// shift) and kept: the host-side set-up of 256M elements takes longer than the benchmark.
Tensor ramp(Device& dev, DType type, int64_t n, int shift) {
  static std::map<std::tuple<DType, int64_t, int>, Tensor> made;
  auto key = std::make_tuple(type, n, shift);
  if (auto it = made.find(key); it != made.end()) return it->second;
  // Inputs of other sizes are dropped: memory for one size at a time.
  for (auto it = made.begin(); it != made.end();)
    it = std::get<1>(it->first) != n ? made.erase(it) : std::next(it);
  std::vector<float> host(static_cast<size_t>(n));
  // NXV_BENCH_ZEROS=1: all-zero inputs (as earlier versions of this benchmark had), to see
  // whether the data's values change the memory system's rate.
  bool zeros = std::getenv("NXV_BENCH_ZEROS") != nullptr;
  for (int64_t i = 0; i < n && !zeros; ++i) {
    float x = float(i % 65521) * kScale + kOffsets[shift];
    host[size_t(i)] = x - std::floor(x);
  }
  Tensor x = from_host(dev, DType::F32, {n}, host.data(), host.size() * sizeof(float));
  return made[key] = type == DType::F32 ? x : run_op(dev, "as_type", {type, {n}}, {x});
}

void run_op_bench(benchmark::State& state, const char* op, DType type, int arity) {
  Device& dev = device();
  int64_t n = state.range(0);
  std::vector<Tensor> inputs;
  for (int k = 0; k < arity; ++k) inputs.push_back(ramp(dev, type, n, k));
  // Several ops per timing so that one submit + wait does not dominate small sizes.
  int per_iter = n >= (16 << 20) ? 10 : 100;
  warm_up([&] { run_op(dev, op, {type, {n}}, inputs); });
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) run_op(dev, op, {type, {n}}, inputs);
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  // Rates below are per second of manual time, which covers `per_iter` ops.
  double bytes = double(arity + 1) * double(n) * double(dtype_size(type)) * per_iter;
  state.counters["ops_per_iter"] = per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] = benchmark::Counter(bytes / limits().copy_bytes_per_s,
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AddF32(benchmark::State& state) { run_op_bench(state, "add", DType::F32, 2); }
void BM_Binary(benchmark::State& state, const char* op, DType type) { run_op_bench(state, op, type, 2); }
void BM_Unary(benchmark::State& state, const char* op, DType type) { run_op_bench(state, op, type, 1); }

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = 1 << 10; n <= max_elements(); n *= 4) b->Arg(n);
}

// The largest size only for the per-type and per-op rows: the sweep above shows the shape.
void largest(benchmark::internal::Benchmark* b) { b->Arg(max_elements()); }

BENCHMARK(BM_AddF32)->Apply(sizes)->UseManualTime()->Unit(benchmark::kMicrosecond);
#define NXV_BENCH(kind, op, type) \
  BENCHMARK_CAPTURE(kind, op##_##type, #op, DType::type)->Apply(largest)->UseManualTime()->Unit(benchmark::kMicrosecond)
NXV_BENCH(BM_Binary, multiply, F32);
NXV_BENCH(BM_Binary, add, F16);
NXV_BENCH(BM_Binary, add, BF16);
NXV_BENCH(BM_Binary, multiply, F16);
NXV_BENCH(BM_Binary, max, BF16);
NXV_BENCH(BM_Binary, divide, F32);
NXV_BENCH(BM_Binary, pow, F32);
NXV_BENCH(BM_Binary, multiply, BF16);
NXV_BENCH(BM_Unary, negate, F32);
NXV_BENCH(BM_Unary, exp, F32);
NXV_BENCH(BM_Unary, expm1, F32);
NXV_BENCH(BM_Unary, log, F32);
NXV_BENCH(BM_Unary, log1p, F32);
NXV_BENCH(BM_Unary, sigmoid, F32);
NXV_BENCH(BM_Unary, sin, F32);
NXV_BENCH(BM_Unary, cos, F32);
NXV_BENCH(BM_Unary, tan, F32);
NXV_BENCH(BM_Unary, sinh, F32);
NXV_BENCH(BM_Unary, cosh, F32);
NXV_BENCH(BM_Unary, tanh, F32);
NXV_BENCH(BM_Unary, asin, F32);
NXV_BENCH(BM_Unary, acos, F32);
NXV_BENCH(BM_Unary, atan, F32);
NXV_BENCH(BM_Unary, asinh, F32);
NXV_BENCH(BM_Unary, atanh, F32);
NXV_BENCH(BM_Unary, erf, F32);
NXV_BENCH(BM_Unary, erfc, F32);
NXV_BENCH(BM_Unary, erf_inv, F32);
NXV_BENCH(BM_Unary, sqrt, F32);
NXV_BENCH(BM_Unary, rsqrt, F32);
NXV_BENCH(BM_Unary, cbrt, F32);
NXV_BENCH(BM_Unary, exp, F16);
NXV_BENCH(BM_Unary, exp, BF16);
NXV_BENCH(BM_Unary, tanh, BF16);

}  // namespace
}  // namespace nxv::bench
