// Benchmarks report ratios to the device's own limits measured in the same run
// (bench/device_limits.cpp), never bare times alone.
#include <benchmark/benchmark.h>

#include "device_limits.hpp"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  nxv::bench::limits();  // measure before anything else runs
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
