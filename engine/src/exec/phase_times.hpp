// Where an eager op's host time goes, for diagnosis on machines without a profiler: with
// NX_VULKAN_PHASE_TIMES=1 the stream and run_op add the time of each phase to process-wide counters
// (nxv_bench prints them); otherwise each timer is one predictable branch.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace nxv {

enum class Phase : uint8_t { RunOp, StreamLock, OpenBatch, RecordCommands, Retire, Submit, Count };

struct PhaseTotals {
  std::array<std::atomic<uint64_t>, size_t(Phase::Count)> ns{};
  std::array<std::atomic<uint64_t>, size_t(Phase::Count)> calls{};
};

bool phase_timing_on();
PhaseTotals& phase_totals();
const char* phase_name(Phase p);

class PhaseTimer {
 public:
  explicit PhaseTimer(Phase p) : phase_(p), on_(phase_timing_on()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~PhaseTimer() {
    if (!on_) return;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
    auto& t = phase_totals();
    t.ns[size_t(phase_)].fetch_add(uint64_t(ns), std::memory_order_relaxed);
    t.calls[size_t(phase_)].fetch_add(1, std::memory_order_relaxed);
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  Phase phase_;
  bool on_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace nxv
