// A reduction computed inside one workgroup with the bits of its eager kernel (a loop kernel's
// reduction, ops/loop/loop_kernel.hpp): the reductions the eager path runs in one pass of
// reduce.comp, described by how each row is folded and combined.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/glsl_types.hpp"
#include "nxv/device.hpp"
#include "nxv/ops.hpp"
#include "ops/reduce/reduce_plan.hpp"

namespace nxv {

// One pass of reduce.comp: row q of [outer, chunks, inner] (q = (o * chunks + g) * inner + i)
// is chunk g (elements g * chunk_len up to (g + 1) * chunk_len) of row o * inner + i of what the
// pass reads, `geometry` (the input, or the pass before's partials, laid out [outer, chunks,
// inner]). It is folded by `lanes` lanes: lane l folds elements r0 + l, r0 + l + lanes, ...
// (with `vec4`, runs of four from 4 * (r0 / 4 + l) on) in order from the identity; then the lanes
// combine pairwise, lane l taking lane l + d: first d = 1, 2, ... below `shuffle_width` (subgroup
// shuffles), then d = lanes / 2 down to `shuffle_width`. Lane 0's value is result q.
struct WorkgroupReducePass {
  ReduceGeometry geometry;
  uint64_t chunks = 1, chunk_len = 0;
  uint32_t lanes = 1, shuffle_width = 1;
  bool vec4 = false;
};

// The passes, then how values fold: the first pass loads the input by `load`, the others
// read partials of type `acc`; the last stores by `store`.
struct WorkgroupReduce {
  std::vector<WorkgroupReducePass> passes;
  AccType acc = AccType::F32;
  std::string ident;
  std::string combine;  // over a and b (each may appear more than once)
  std::string load;     // over x, the input as stored
  std::string store;    // over v, into the output's storage
};

// The reduction as above, or nullopt with `why` set where its eager kernel takes a copy, a
// combiner (reduce/5), an index (argmax, argmin) or a fused chain.
std::optional<WorkgroupReduce> workgroup_reduce(Device& device, OpId op, const OutSpec& out, const TensorSpec& in,
                                                const Attrs& attrs, std::string& why);

}  // namespace nxv
