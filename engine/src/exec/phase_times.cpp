#include "exec/phase_times.hpp"

#include "common/settings.hpp"

namespace nxv {

bool phase_timing_on() {
  static const bool on = settings()->phase_times;
  return on;
}

PhaseTotals& phase_totals() {
  static PhaseTotals totals;
  return totals;
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::RunOp: return "run_op";
    case Phase::StreamLock: return "stream_lock";
    case Phase::OpenBatch: return "open_batch";
    case Phase::RecordCommands: return "record_commands";
    case Phase::Retire: return "retire";
    case Phase::Submit: return "submit";
    case Phase::Count: break;
  }
  return "?";
}

}  // namespace nxv
