// The device's own limits, measured once per run, that every benchmark reports its ratio to:
// copy bandwidth (vkCmdCopyBuffer, read + write bytes) and the submit + wait round trip.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "nxv/device.hpp"
#include "nxv/dtype.hpp"
#include "nxv/tensor.hpp"

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

// Keeps the device busy with `one` (then a wait) for `seconds`. GPUs leave their idle clocks
// only after a few hundred milliseconds of load (an H200 ran add 2.4x slower for the first
// ~250 ms after 3 s idle), and a benchmark's host-side set-up idles the device: without this,
// a timing averages the two clock states.
void warm_up(const std::function<void()>& one, double seconds = 0.5);

// The device's fma rate in flop/s (2 per fma), f32 or f64 (`type`), measured once with the
// probe kernel (test/probes/fma_probe.comp): dot's and conv's figures are reported against it.
double fma_peak(DType type);

// Most flop a compute benchmark may take (NXV_BENCH_MAX_FLOP; default 5e9 on CPU drivers,
// where the large products would take minutes); larger ones are skipped.
double max_flop();

// A tensor of `type` and `shape` holding sin(i * 0.618) (through f32), for compute benchmarks.
Tensor bench_values(Device& dev, DType type, const Shape& shape);

// Runs `iterations` copies of `bytes` between two buffers and waits; returns seconds per copy.
double time_copies(uint64_t bytes, int iterations);

}  // namespace nxv::bench
