// The device's own limits, measured once per run, that every benchmark reports its ratio to:
// copy bandwidth (vkCmdCopyBuffer, read + write bytes) and the submit + wait round trip.
#pragma once
#include <cstdint>
#include <memory>

#include "nxv/device.hpp"

namespace nxv::bench {

Device& device();
// Largest element count benchmarks use (NXV_BENCH_MAX_ELEMENTS, default 256M on GPUs, 16M on CPUs).
int64_t max_elements();

struct Limits {
  double copy_bytes_per_s = 0;  // bytes read + written per second: the best of the two below
  double transfer_bytes_per_s = 0;
  double shader_copy_bytes_per_s = 0;
  double round_trip_s = 0;      // one tiny command: record, submit, wait
};
const Limits& limits();

// Runs `iterations` copies of `bytes` between two buffers and waits; returns seconds per copy.
double time_copies(uint64_t bytes, int iterations);

}  // namespace nxv::bench
