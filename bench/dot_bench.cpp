// dot at the sizes of ../shared/anchors/jax_ops.py's dot section (f32 at JAX's precision
// "highest": full f32 products; bf16/f16 8192^3 accumulating in f32; f64 2048^3), plus 512^3
// f32 (the lavapipe target: within 2x of numpy with OpenBLAS). Counter TFLOP/s = 2*M*N*K per
// second, JAX's count; of_fma_peak: that over the device's fma rate (fma_probe.comp) in the
// same run. Products over NXV_BENCH_MAX_FLOP (default 5e9 on CPU drivers, where
// 8192^3 would take minutes) are skipped.
#include <benchmark/benchmark.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "device/device_impl.hpp"
#include "device_limits.hpp"
#include "exec/linear_plan.hpp"
#include "nxv/ops.hpp"
#include "ops/dot/dot_attrs.hpp"

namespace nxv::bench {
namespace {

// Times `per_iter` products per synchronisation, as the benchmark's manual time.
void time_products(benchmark::State& state, Device& dev, int per_iter, const std::function<void()>& product) {
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) product();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

// [m, k] . [k, n] -> [m, n] (m == 1: a vector [k] times [k, n], as jnp.matmul of (1, K) gives).
void run_dot(benchmark::State& state, DType in, DType out, int64_t m, int64_t k, int64_t n) {
  Device& dev = device();
  double flop = 2.0 * double(m) * double(n) * double(k);
  if (flop > max_flop()) {
    state.SkipWithError("over NXV_BENCH_MAX_FLOP");
    return;
  }
  DotAttrs attrs{{1}, {}, {0}, {}};
  Attrs at = Attrs::of(attrs);
  OpId op = *find_op("dot");
  TensorSpec specs[] = {contiguous_spec(in, {m, k}), contiguous_spec(in, {k, n})};
  if (!check_op(dev, op, {out, {m, n}}, specs, at)) {
    state.SkipWithError("dot of these types is not native on this device");
    return;
  }
  Tensor a = bench_values(dev, in, {m, k}), b = bench_values(dev, in, {k, n});
  OutSpec spec{out, {m, n}};
  int per_iter = flop > 1e11 ? 1 : 10;
  warm_up([&] { run_op(dev, op, spec, {a, b}, at); });
  time_products(state, dev, per_iter, [&] { run_op(dev, op, spec, {a, b}, at); });
  state.counters["TFLOP/s"] = benchmark::Counter(flop * per_iter / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  // Against the f32 (f64) fma rate (the SIMT kernels' peak; the cooperative-matrix tier of
  // f16/bf16 inputs runs past it).
  state.counters["of_fma_peak"] = benchmark::Counter(flop * per_iter / fma_peak(out == DType::F64 ? DType::F64 : DType::F32),
                                                     benchmark::Counter::kIsIterationInvariantRate);
  // The matrix-vector shape is memory bound: its bytes against the copy bandwidth.
  double bytes = double(dtype_size(in)) * double(m * k + k * n) + double(dtype_size(out)) * double(m * n);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes * per_iter / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_DotF32_8192(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 8192, 8192, 8192); }
void BM_DotF32_4096(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 4096, 4096, 4096); }
void BM_DotF32_256x784x1024(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 256, 784, 1024); }
void BM_DotF32_256x1024x1024(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 256, 1024, 1024); }
void BM_DotF32_1x4096x4096(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 1, 4096, 4096); }
void BM_DotF32_512(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 512, 512, 512); }
// The rest of bench/dot_vs_numpy.exs's GEMM shapes on lavapipe: an odd size, f64 and s32.
void BM_DotF32_511(benchmark::State& s) { run_dot(s, DType::F32, DType::F32, 511, 511, 511); }
void BM_DotF64_512(benchmark::State& s) { run_dot(s, DType::F64, DType::F64, 512, 512, 512); }
void BM_DotS32_512(benchmark::State& s) { run_dot(s, DType::S32, DType::S32, 512, 512, 512); }
void BM_DotF64_2048(benchmark::State& s) { run_dot(s, DType::F64, DType::F64, 2048, 2048, 2048); }
// jnp.matmul(x, y, preferred_element_type=f32): bf16/f16 inputs, f32 accumulation and result.
void BM_DotBF16_8192(benchmark::State& s) { run_dot(s, DType::BF16, DType::F32, 8192, 8192, 8192); }
void BM_DotF16_8192(benchmark::State& s) { run_dot(s, DType::F16, DType::F32, 8192, 8192, 8192); }
void BM_DotBF16_4096(benchmark::State& s) { run_dot(s, DType::BF16, DType::F32, 4096, 4096, 4096); }
void BM_DotF16_4096(benchmark::State& s) { run_dot(s, DType::F16, DType::F32, 4096, 4096, 4096); }
// Nx's own typing: bf16 x bf16 -> bf16 (f32 accumulation, one rounding at the end).
void BM_DotBF16_8192_BF16Out(benchmark::State& s) { run_dot(s, DType::BF16, DType::BF16, 8192, 8192, 8192); }
// jnp.matmul(x, y, preferred_element_type=int32) on s8 inputs (TFLOP/s here: tera-ops).
void BM_DotS8_8192(benchmark::State& s) { run_dot(s, DType::S8, DType::S32, 8192, 8192, 8192); }
void BM_DotS8_4096(benchmark::State& s) { run_dot(s, DType::S8, DType::S32, 4096, 4096, 4096); }

// TFLOP/s of `per_iter` units of work (`flop` each) per timed iteration, and with
// NX_VULKAN_PROFILE=1 the GPU's busy time per unit from timestamps (gpu_us, gpu_TFLOP/s).
void count_rates(benchmark::State& state, Device& dev, double flop, int per_iter) {
  state.counters["TFLOP/s"] = benchmark::Counter(flop * per_iter / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  double gpu_ns = 0;
  for (const KernelTime& t : dev.kernel_profile()) gpu_ns += t.total_ns;
  if (gpu_ns > 0) {
    double units = double(state.iterations()) * per_iter;
    state.counters["gpu_us"] = gpu_ns / units / 1e3;
    state.counters["gpu_TFLOP/s"] = flop * units / gpu_ns / 1e3;
  }
}

// The MLP step's products (784-1024-1024-10 at batch 256), forward and backward, as a compiled
// step runs them: operands read in place through the contraction axes (A^T: A stored [k, m];
// B^T: B stored [n, k]). Besides the wall-clock figure, with NX_VULKAN_PROFILE=1 the GPU
// time of the product's kernels from timestamps (gpu_us per product, gpu_TFLOP/s).
enum class Layout { AB, AtB, ABt };

void run_training_dot(benchmark::State& state, int64_t m, int64_t k, int64_t n, Layout layout) {
  Device& dev = device();
  double flop = 2.0 * double(m) * double(n) * double(k);
  Shape as = layout == Layout::AtB ? Shape{k, m} : Shape{m, k};
  Shape bs = layout == Layout::ABt ? Shape{n, k} : Shape{k, n};
  DotAttrs attrs{{layout == Layout::AtB ? 0 : 1}, {}, {layout == Layout::ABt ? 1 : 0}, {}};
  Attrs at = Attrs::of(attrs);
  OpId op = *find_op("dot");
  Tensor a = bench_values(dev, DType::F32, as), b = bench_values(dev, DType::F32, bs);
  OutSpec spec{DType::F32, {m, n}};
  const int per_iter = 20;
  warm_up([&] { run_op(dev, op, spec, {a, b}, at); });
  dev.synchronize();
  dev.kernel_profile();  // drop the warm-up's times
  time_products(state, dev, per_iter, [&] { run_op(dev, op, spec, {a, b}, at); });
  count_rates(state, dev, flop, per_iter);
}

// One layer's two backward products at batch 256, independent of each other: dW = x^T dh
// (1024x256x1024 A^T B) and dx = dh W^T (256x1024x1024 A B^T), recorded one after the other as
// a compiled step's level records them (no barrier between independent launches). With
// NX_VULKAN_PROFILE=1, gpu_us is the GPU's busy time per pair (timestamps), against the two
// products' own gpu_us; NX_VULKAN_BARRIER_ALL=1 puts a barrier before every launch, for the
// pair one after the other.
void BM_TrainPair_256x1024x1024_dW_dx(benchmark::State& state) {
  Device& dev = device();
  const int64_t batch = 256, in = 1024, out = 1024;
  double flop = 2.0 * 2.0 * double(batch) * double(in) * double(out);
  OpId op = *find_op("dot");
  Tensor x = bench_values(dev, DType::F32, {batch, in}), dh = bench_values(dev, DType::F32, {batch, out});
  Tensor w = bench_values(dev, DType::F32, {in, out});
  Attrs at_b = Attrs::of(DotAttrs{{0}, {}, {0}, {}});  // x^T dh: [in, out]
  Attrs a_bt = Attrs::of(DotAttrs{{1}, {}, {1}, {}});  // dh W^T: [batch, in]
  auto pair = [&] {
    run_op(dev, op, {DType::F32, {in, out}}, {x, dh}, at_b);
    run_op(dev, op, {DType::F32, {batch, in}}, {dh, w}, a_bt);
  };
  const int per_iter = 10;
  warm_up(pair);
  dev.synchronize();
  dev.kernel_profile();
  time_products(state, dev, per_iter, pair);
  count_rates(state, dev, flop, per_iter);
}

void BM_Train_256x784x1024_AB(benchmark::State& s) { run_training_dot(s, 256, 784, 1024, Layout::AB); }
void BM_Train_256x1024x1024_AB(benchmark::State& s) { run_training_dot(s, 256, 1024, 1024, Layout::AB); }
void BM_Train_256x1024x10_AB(benchmark::State& s) { run_training_dot(s, 256, 1024, 10, Layout::AB); }
void BM_Train_1024x256x1024_AtB(benchmark::State& s) { run_training_dot(s, 1024, 256, 1024, Layout::AtB); }
void BM_Train_784x256x1024_AtB(benchmark::State& s) { run_training_dot(s, 784, 256, 1024, Layout::AtB); }
void BM_Train_1024x256x10_AtB(benchmark::State& s) { run_training_dot(s, 1024, 256, 10, Layout::AtB); }
void BM_Train_256x1024x1024_ABt(benchmark::State& s) { run_training_dot(s, 256, 1024, 1024, Layout::ABt); }
void BM_Train_256x10x1024_ABt(benchmark::State& s) { run_training_dot(s, 256, 10, 1024, Layout::ABt); }
// Batch 16's: its rows' products one matrix-vector product each (and the K = 16 weight gradient).
void BM_Train_16x784x1024_AB(benchmark::State& s) { run_training_dot(s, 16, 784, 1024, Layout::AB); }
void BM_Train_16x1024x1024_AB(benchmark::State& s) { run_training_dot(s, 16, 1024, 1024, Layout::AB); }
void BM_Train_16x1024x1024_ABt(benchmark::State& s) { run_training_dot(s, 16, 1024, 1024, Layout::ABt); }
void BM_Train_784x16x1024_AtB(benchmark::State& s) { run_training_dot(s, 784, 16, 1024, Layout::AtB); }

#define NXV_DOT_BENCH(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMillisecond)
NXV_DOT_BENCH(BM_DotF32_8192);
NXV_DOT_BENCH(BM_DotF32_4096);
NXV_DOT_BENCH(BM_DotF32_256x784x1024);
NXV_DOT_BENCH(BM_DotF32_256x1024x1024);
NXV_DOT_BENCH(BM_DotF32_1x4096x4096);
NXV_DOT_BENCH(BM_DotF32_512);
NXV_DOT_BENCH(BM_DotF32_511);
NXV_DOT_BENCH(BM_DotF64_512);
NXV_DOT_BENCH(BM_DotS32_512);
NXV_DOT_BENCH(BM_DotF64_2048);
NXV_DOT_BENCH(BM_DotBF16_8192);
NXV_DOT_BENCH(BM_DotF16_8192);
NXV_DOT_BENCH(BM_DotBF16_4096);
NXV_DOT_BENCH(BM_DotF16_4096);
NXV_DOT_BENCH(BM_DotBF16_8192_BF16Out);
NXV_DOT_BENCH(BM_DotS8_8192);
NXV_DOT_BENCH(BM_DotS8_4096);
NXV_DOT_BENCH(BM_Train_256x784x1024_AB);
NXV_DOT_BENCH(BM_Train_256x1024x1024_AB);
NXV_DOT_BENCH(BM_Train_256x1024x10_AB);
NXV_DOT_BENCH(BM_Train_1024x256x1024_AtB);
NXV_DOT_BENCH(BM_Train_784x256x1024_AtB);
NXV_DOT_BENCH(BM_Train_1024x256x10_AtB);
NXV_DOT_BENCH(BM_Train_256x1024x1024_ABt);
NXV_DOT_BENCH(BM_Train_256x10x1024_ABt);
NXV_DOT_BENCH(BM_Train_16x784x1024_AB);
NXV_DOT_BENCH(BM_Train_16x1024x1024_AB);
NXV_DOT_BENCH(BM_Train_16x1024x1024_ABt);
NXV_DOT_BENCH(BM_Train_784x16x1024_AtB);
NXV_DOT_BENCH(BM_TrainPair_256x1024x1024_dW_dx);

}  // namespace
}  // namespace nxv::bench
