// Host threads for the parts of a host step (a BLAS product on a CPU driver, split by batch
// items, rows or columns): one process-wide pool, started on first use, whose threads sleep
// while there is no work.
// BLAS libraries' own pools spin after each call (OpenBLAS: up to 2^28 cycles by default), and
// on a CPU driver the next kernels need those cores: the training step of bench/mlp_step.exs
// ran 2.5x slower on two cores with OpenBLAS's threads (bench/RESULTS.md).
#pragma once
#include <cstddef>
#include <functional>

namespace nxv {

// The threads a host step may use: the hardware's, the caller's included (at least 1).
size_t host_parallelism();

// Runs part(0) ... part(parts - 1), spread over the pool and the calling thread, and returns
// when all have finished. The caller runs parts itself too, so this finishes even while other
// callers hold every pool thread. An exception from a part is rethrown here (the first one)
// after all parts have ended.
void run_host_parts(size_t parts, const std::function<void(size_t)>& part);

}  // namespace nxv
