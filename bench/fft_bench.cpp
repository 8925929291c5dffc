// fft along the rows at ../shared/anchors/jax_ops.py's fft size (c64 1024 x 4096), and the two
// other paths of long rows: a power of two past shared memory (4 x 65536) and a length of no
// power of two (16 x 10007, Bluestein's algorithm). GB/s counts each c64 element read and
// written once, as JAX's figure does.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "device_limits.hpp"
#include "nxv/attrs.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

// fft's options (length, axis) as the NIF would hand them over.
class FftOptions final : public AttrReader {
 public:
  FftOptions(int64_t length, int64_t axis) : length_(length), axis_(axis) {}
  bool has(std::string_view key) const override { return key == "length" || key == "axis"; }
  int64_t integer(std::string_view key) const override {
    if (key == "length") return length_;
    if (key == "axis") return axis_;
    bad(key, "an fft option");
  }
  bool boolean(std::string_view key) const override { bad(key, "an fft option"); }
  AttrNumber number(std::string_view key) const override { bad(key, "an fft option"); }
  std::string atom(std::string_view key) const override { bad(key, "an fft option"); }
  std::vector<int64_t> integers(std::string_view key) const override { bad(key, "an fft option"); }
  std::vector<std::vector<int64_t>> integer_lists(std::string_view key) const override { bad(key, "an fft option"); }

 private:
  int64_t length_, axis_;
};

void run_fft(benchmark::State& state, int64_t rows, int64_t n) {
  Device& dev = device();
  Shape shape{rows, n};
  if (shape_size(shape) > max_elements()) return state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
  OpId op = *find_op("fft");
  Attrs attrs = decode_attrs(op, FftOptions(n, 1));
  TensorSpec specs[] = {contiguous_spec(DType::C64, shape)};
  if (!check_op(dev, op, {DType::C64, shape}, specs, attrs))
    return state.SkipWithError("fft of c64 is not native on this device");
  Tensor x = bench_values(dev, DType::C64, shape);
  OutSpec out{DType::C64, shape};
  int per_iter = 20;  // calls per wait, as ../shared/anchors/jax_ops.py times JAX
  warm_up([&] { run_op(dev, op, out, {x}, attrs); });
  dev.synchronize();
  dev.kernel_profile();  // drop the warm-up's times
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) run_op(dev, op, out, {x}, attrs);
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double bytes = 16.0 * double(shape_size(shape)) * per_iter;
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy_bw"] =
      benchmark::Counter(bytes / limits().copy_bytes_per_s, benchmark::Counter::kIsIterationInvariantRate);
  // NX_VULKAN_PROFILE=1: GPU time per transform of each kernel template (from timestamps).
  double transforms = double(state.iterations()) * per_iter;
  for (const KernelTime& t : dev.kernel_profile()) {
    std::string name = "us_" + t.kernel.substr(0, t.kernel.find('['));
    state.counters[name] = state.counters[name].value + t.total_ns / transforms / 1e3;
  }
}

void BM_FftC64_1024x4096(benchmark::State& s) { run_fft(s, 1024, 4096); }
void BM_FftC64_4x65536(benchmark::State& s) { run_fft(s, 4, 65536); }
void BM_FftC64_16x10007(benchmark::State& s) { run_fft(s, 16, 10007); }

BENCHMARK(BM_FftC64_1024x4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FftC64_4x65536)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FftC64_16x10007)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace nxv::bench
