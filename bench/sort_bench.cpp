// Sorting at the sizes of ../shared/anchors/jax_ops.py's sort section: sort and argsort of 16M
// f32, sort along the rows of 65536x256 f32 and top_k 8 of them, in keys sorted per second (JAX's figure is the
// same). Keys are pseudo-random floats in (-4, 4) (JAX sorts normal samples: the radix sort's
// speed does not depend on the distribution much, the digits of either are well spread).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "device_limits.hpp"
#include "nxv/ops.hpp"
#include "ops/index/index_attrs.hpp"
#include "ops/sort/sort_attrs.hpp"

namespace nxv::bench {
namespace {

Tensor random_keys(Device& dev, const Shape& shape) {
  std::vector<float> host(size_t(shape_size(shape)));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& x : host) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;  // xorshift64
    x = float(int64_t(s >> 40) - (1ll << 23)) / float(1 << 21);
  }
  return from_host(dev, DType::F32, shape, host.data(), host.size() * sizeof(float));
}

void run_sort(benchmark::State& state, const char* op, const Shape& shape, int64_t axis, DType out_type) {
  Device& dev = device();
  if (shape_size(shape) > max_elements()) {
    state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
    return;
  }
  Tensor x = random_keys(dev, shape);
  SortAttrs a;
  a.axis = axis;
  Attrs attrs = Attrs::of(a);
  OpId id = *find_op(op);
  OutSpec out{out_type, shape};
  int per_iter = 5;
  warm_up([&] { run_op(dev, id, out, {x}, attrs); });
  dev.synchronize();
  dev.kernel_profile();  // drop the warm-up's times
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) run_op(dev, id, out, {x}, attrs);
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double keys = double(shape_size(shape)) * per_iter;
  state.counters["Gkeys/s"] = benchmark::Counter(keys / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  // NX_VULKAN_PROFILE=1: GPU time per sort of each kernel template (from timestamps).
  double sorts = double(state.iterations()) * per_iter;
  for (const KernelTime& t : dev.kernel_profile()) {
    std::string name = "us_" + t.kernel.substr(0, t.kernel.find('['));
    state.counters[name] = state.counters[name].value + t.total_ns / sorts / 1e3;
  }
}

constexpr int64_t k16M = 1 << 24;

void BM_Sort16MF32(benchmark::State& s) { run_sort(s, "sort", {k16M}, 0, DType::F32); }
// jnp.argsort gives int32 indices (JAX without x64 indices by default); Nx's default is s64.
void BM_Argsort16MF32(benchmark::State& s) { run_sort(s, "argsort", {k16M}, 0, DType::S32); }
void BM_SortRows65536x256F32(benchmark::State& s) { run_sort(s, "sort", {65536, 256}, 1, DType::F32); }

// Nx.top_k(x, k: 8) as the backend runs it: top_k's indices, then take_along_axis's values.
void BM_TopK8Of65536x256F32(benchmark::State& state) {
  Device& dev = device();
  Shape shape{65536, 256};
  if (shape_size(shape) > max_elements()) return state.SkipWithError("over NXV_BENCH_MAX_ELEMENTS");
  Tensor x = random_keys(dev, shape);
  SortAttrs a;
  a.k = 8;
  IndexAttrs along;
  along.axis = 1;
  Attrs top = Attrs::of(a), take = Attrs::of(along);
  OpId top_k = *find_op("top_k"), take_along = *find_op("take_along_axis");
  auto call = [&] {
    Tensor idx = run_op(dev, top_k, OutSpec{DType::S32, {65536, 8}}, {x}, top);
    run_op(dev, take_along, OutSpec{DType::F32, {65536, 8}}, {x, idx}, take);
  };
  int per_iter = 5;
  warm_up(call);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_iter; ++i) call();
    dev.synchronize();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double keys = double(shape_size(shape)) * per_iter;
  state.counters["Gkeys/s"] = benchmark::Counter(keys / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

#define NXV_SORT_BENCH(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMillisecond)
NXV_SORT_BENCH(BM_Sort16MF32);
NXV_SORT_BENCH(BM_Argsort16MF32);
NXV_SORT_BENCH(BM_SortRows65536x256F32);
NXV_SORT_BENCH(BM_TopK8Of65536x256F32);

}  // namespace
}  // namespace nxv::bench
