// conv at the shape of ../shared/anchors/jax_ops.py's conv section: 3x3, padding same, input
// 64x256x56x56 (NCHW), 256 filters (OIHW), f32 / bf16 / f16 (bf16 and f16 accumulate in f32
// and return their type, as JAX's default does); the same in NHWC/HWIO (Axon's layout; the
// kernel is then read in place); and 8x64x28x28 with 64 filters, small enough for lavapipe.
// Counter TFLOP/s = 2 * N * O * H * W * C * 3 * 3 per second (JAX's count); of_fma_peak: that
// over the device's f32 fma rate in the same run. Convolutions over NXV_BENCH_MAX_FLOP are
// skipped (default 5e9 on CPU drivers). BM_ConvBiasRelu*: relu(conv + bias) with the bias
// along the filters, as one conv with an epilogue (Fused) or as conv, add, max (Ops).
#include <benchmark/benchmark.h>

#include <chrono>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/conv/conv_attrs.hpp"

namespace nxv::bench {
namespace {

enum class Epilogue { None, Fused, Ops };

// [n, c, h, w] * [o, c, 3, 3], padding 1, stride 1; channels last when `nhwc`; with a bias
// add and relu where `epi` says.
void run_conv(benchmark::State& state, DType type, int64_t n, int64_t c, int64_t hw, int64_t o, bool nhwc,
              Epilogue epi = Epilogue::None) {
  Device& dev = device();
  double flop = 2.0 * double(n) * double(o) * double(hw * hw) * double(c) * 9;
  if (flop > max_flop()) {
    state.SkipWithError("over NXV_BENCH_MAX_FLOP");
    return;
  }
  ConvAttrs attrs;
  attrs.strides = {1, 1};
  attrs.padding = {{1, 1}, {1, 1}};
  attrs.input_dilation = attrs.kernel_dilation = {1, 1};
  attrs.input_permutation = attrs.output_permutation = nhwc ? std::vector<int64_t>{0, 3, 1, 2}
                                                            : std::vector<int64_t>{0, 1, 2, 3};
  attrs.kernel_permutation = nhwc ? std::vector<int64_t>{3, 2, 0, 1} : std::vector<int64_t>{0, 1, 2, 3};
  Shape in_shape = nhwc ? Shape{n, hw, hw, c} : Shape{n, c, hw, hw};
  Shape ker_shape = nhwc ? Shape{3, 3, c, o} : Shape{o, c, 3, 3};
  Shape out_shape = nhwc ? Shape{n, hw, hw, o} : Shape{n, o, hw, hw};
  Attrs at = Attrs::of(attrs);
  OpId op = *find_op("conv");
  TensorSpec specs[] = {contiguous_spec(type, in_shape), contiguous_spec(type, ker_shape)};
  if (Support s = check_op(dev, op, {type, out_shape}, specs, at); !s) {
    state.SkipWithError(("conv is not native here: " + s.reason).c_str());
    return;
  }
  Tensor x = bench_values(dev, type, in_shape), w = bench_values(dev, type, ker_shape);
  OutSpec spec{type, out_shape};
  Tensor bias = bench_values(dev, type, nhwc ? Shape{o} : Shape{o, 1, 1}), zero = bench_values(dev, type, {});
  ConvAttrs with = attrs;
  with.product = type;
  with.epilogue = ElementwiseChain{{{*find_op("add"), type, {{ChainOperand::From::Input, 0}, {ChainOperand::From::Input, 1}}},
                                    {*find_op("max"), type, {{ChainOperand::From::Step, 0}, {ChainOperand::From::Input, 2}}}}};
  Attrs fused = Attrs::of(with);
  auto once = [&] {
    if (epi == Epilogue::Fused) return run_op(dev, op, spec, {x, w, bias, zero}, fused);
    Tensor y = run_op(dev, op, spec, {x, w}, at);
    if (epi == Epilogue::None) return y;
    return run_op(dev, *find_op("max"), spec, {run_op(dev, *find_op("add"), spec, {y, bias}, Attrs{}), zero}, Attrs{});
  };
  int per_iter = flop > 1e11 ? 1 : 5;
  warm_up([&] { once(); });
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) once();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.counters["TFLOP/s"] = benchmark::Counter(flop * per_iter / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_fma_peak"] =
      benchmark::Counter(flop * per_iter / fma_peak(DType::F32), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ConvF32_64x256x56(benchmark::State& s) { run_conv(s, DType::F32, 64, 256, 56, 256, false); }
void BM_ConvBF16_64x256x56(benchmark::State& s) { run_conv(s, DType::BF16, 64, 256, 56, 256, false); }
void BM_ConvF16_64x256x56(benchmark::State& s) { run_conv(s, DType::F16, 64, 256, 56, 256, false); }
void BM_ConvF32_64x256x56_NHWC(benchmark::State& s) { run_conv(s, DType::F32, 64, 256, 56, 256, true); }
void BM_ConvBF16_64x256x56_NHWC(benchmark::State& s) { run_conv(s, DType::BF16, 64, 256, 56, 256, true); }
void BM_ConvF32_8x64x28(benchmark::State& s) { run_conv(s, DType::F32, 8, 64, 28, 64, false); }
void BM_ConvF32_8x64x28_NHWC(benchmark::State& s) { run_conv(s, DType::F32, 8, 64, 28, 64, true); }
void BM_ConvBiasReluFusedF32_8x64x28_NHWC(benchmark::State& s) {
  run_conv(s, DType::F32, 8, 64, 28, 64, true, Epilogue::Fused);
}
void BM_ConvBiasReluOpsF32_8x64x28_NHWC(benchmark::State& s) {
  run_conv(s, DType::F32, 8, 64, 28, 64, true, Epilogue::Ops);
}
void BM_ConvBiasReluFusedBF16_64x256x56(benchmark::State& s) {
  run_conv(s, DType::BF16, 64, 256, 56, 256, false, Epilogue::Fused);
}
void BM_ConvBiasReluOpsBF16_64x256x56(benchmark::State& s) {
  run_conv(s, DType::BF16, 64, 256, 56, 256, false, Epilogue::Ops);
}

#define NXV_CONV_BENCH(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMillisecond)
NXV_CONV_BENCH(BM_ConvF32_64x256x56);
NXV_CONV_BENCH(BM_ConvBF16_64x256x56);
NXV_CONV_BENCH(BM_ConvF16_64x256x56);
NXV_CONV_BENCH(BM_ConvF32_64x256x56_NHWC);
NXV_CONV_BENCH(BM_ConvBF16_64x256x56_NHWC);
NXV_CONV_BENCH(BM_ConvF32_8x64x28);
NXV_CONV_BENCH(BM_ConvF32_8x64x28_NHWC);
NXV_CONV_BENCH(BM_ConvBiasReluFusedF32_8x64x28_NHWC);
NXV_CONV_BENCH(BM_ConvBiasReluOpsF32_8x64x28_NHWC);
NXV_CONV_BENCH(BM_ConvBiasReluFusedBF16_64x256x56);
NXV_CONV_BENCH(BM_ConvBiasReluOpsBF16_64x256x56);

}  // namespace
}  // namespace nxv::bench
