// Generated GLSL (a fused chain's functions, a combiner's) is emitted only where a kernel
// needs it: on a cache miss, or when a graph compiles. Each emission is counted, so that a
// test sees an eager op whose kernel is cached emit none.
#pragma once
#include <cstdint>

namespace nxv {

void count_glsl_emission();
uint64_t glsl_emissions();  // since the process started

}  // namespace nxv
