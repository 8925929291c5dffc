// Donation honoured in place: a donated input's buffer holds the output it is donated to
// (Graph::donate) where the program can write that output over it safely. In a program
// scheduled by level (graph/level_schedule.hpp), every other launch that reads the input runs
// at a lower level than the launches that write the output (so a full barrier lies between),
// and a writer that reads the input itself stores each element where it read it (its
// family's stores_where_it_reads: an elementwise chain, a product's epilogue: w - lr * dw).
// The output must be its node's whole buffer, row-major, read by no other output.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "exec/launch.hpp"
#include "nxv/graph.hpp"

namespace nxv {

// The donations of `given` honoured in place, as (input index, output slot) pairs; `fused` is
// the graph the executable was lowered from (the same inputs and outputs), `outputs` the slot
// and view of each output.
std::vector<std::pair<uint32_t, uint32_t>> in_place_donations(const Graph& given, const Graph& fused,
                                                              const Executable& exec,
                                                              const std::vector<int64_t>& input_slots,
                                                              const std::vector<std::pair<uint32_t, Tensor>>& outputs,
                                                              const std::vector<uint64_t>& slot_bytes);

}  // namespace nxv
