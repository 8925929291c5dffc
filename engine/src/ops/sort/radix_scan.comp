// LSD radix sort, digit pass 2 of 3, in two launches. BASES=0: each (row, digit) segment of
// hist has its tiles' counts turned into exclusive prefixes and its total written to bases: by
// a workgroup (tiles of WG * 4 counts, a Hillis-Steele scan of the invocations' totals, a
// carry from tile to tile), or with SERIAL (rows of few tiles) by one invocation. BASES=1: a
// workgroup per row turns the row's 256 digit totals into exclusive prefixes. No workgroup
// waits on another. Defines: WG (>= 256 for BASES), BASES, SERIAL, SUBGROUPS (scans by subgroup
// arithmetic).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#if SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x_id = 0) in;

#include "sort_push.h"

layout(push_constant, std430) uniform Params { RadixPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer CountBuf { uint v[]; };

#if SUBGROUPS
shared uint s_sub[64];  // each subgroup's sum
#else
shared uint s_tot[WG];
#endif

// The inclusive scan of v over the workgroup's invocations, and (total) their sum: by subgroup
// scans and the subgroups' sums (two barriers), else Hillis-Steele in shared memory.
uint scan_workgroup(uint tid, uint v, out uint total) {
#if SUBGROUPS
  uint inclusive = subgroupInclusiveAdd(v);
  if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) s_sub[gl_SubgroupID] = inclusive;
  barrier();
  total = 0u;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) {
    uint sum = s_sub[g];
    if (g < gl_SubgroupID) inclusive += sum;
    total += sum;
  }
#else
  s_tot[tid] = v;
  barrier();
  for (uint off = 1u; off < uint(WG); off <<= 1u) {
    uint left = tid >= off ? s_tot[tid - off] : 0u;
    barrier();
    s_tot[tid] += left;
    barrier();
  }
  uint inclusive = s_tot[tid];
  total = s_tot[WG - 1];
#endif
  barrier();  // the next scan writes the shared sums again
  return inclusive;
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  CountBuf hist = CountBuf(pc.hist);
  CountBuf bases = CountBuf(pc.bases);
#if BASES
  for (uint row = gl_WorkGroupID.x; row < pc.rows; row += gl_NumWorkGroups.x) {
    uint v = tid < 256u ? bases.v[row * 256u + tid] : 0u, total;
    uint inclusive = scan_workgroup(tid, v, total);
    if (tid < 256u) bases.v[row * 256u + tid] = inclusive - v;
  }
#elif SERIAL
  uint threads = gl_NumWorkGroups.x * uint(WG);
  for (uint seg = gl_GlobalInvocationID.x; seg < pc.segments; seg += threads) {
    uint base = seg * pc.tiles_per_row;
    uint run = 0u;
    for (uint k = 0u; k < pc.tiles_per_row; ++k) {
      uint v = hist.v[base + k];
      hist.v[base + k] = run;
      run += v;
    }
    bases.v[seg] = run;
  }
#else
  for (uint seg = gl_WorkGroupID.x; seg < pc.segments; seg += gl_NumWorkGroups.x) {
    uint base = seg * pc.tiles_per_row;
    uint carry = 0u;
    for (uint t0 = 0u; t0 < pc.tiles_per_row; t0 += uint(WG) * 4u) {
      uint before[4];
      uint run = 0u;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k = t0 + tid * 4u + j;
        uint v = k < pc.tiles_per_row ? hist.v[base + k] : 0u;
        before[j] = run;
        run += v;
      }
      uint total, prefix = carry + scan_workgroup(tid, run, total) - run;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k = t0 + tid * 4u + j;
        if (k < pc.tiles_per_row) hist.v[base + k] = prefix + before[j];
      }
      carry += total;
    }
    if (tid == 0u) bases.v[seg] = carry;
  }
#endif
}
