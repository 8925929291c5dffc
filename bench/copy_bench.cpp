// Copy bandwidth across sizes (vkCmdCopyBuffer), as a fraction of the run's best.
#include <benchmark/benchmark.h>

#include "device_limits.hpp"

namespace nxv::bench {
namespace {

void BM_CopyBuffer(benchmark::State& state) {
  uint64_t bytes = uint64_t(state.range(0)) * 4;
  double seconds = 0;
  for (auto _ : state) {
    seconds = time_copies(bytes, 10);
    state.SetIterationTime(seconds);
  }
  double bw = 2.0 * double(bytes) / seconds;
  state.counters["GB/s"] = bw / 1e9;
  state.counters["of_copy_bw"] = bw / limits().copy_bytes_per_s;
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t n = 1 << 10; n <= max_elements(); n *= 16) b->Arg(n);
  b->Arg(max_elements());
}

BENCHMARK(BM_CopyBuffer)->Apply(sizes)->UseManualTime()->Iterations(3)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace nxv::bench
