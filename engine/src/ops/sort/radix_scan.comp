// LSD radix sort, digit pass 2 of 3, in two launches. BASES=0: each (row, digit) segment of
// hist has its tiles' counts turned into exclusive prefixes and its total written to bases: by
// a workgroup (tiles of WG * 4 counts, a Hillis-Steele scan of the invocations' totals, a
// carry from tile to tile), or with SERIAL (rows of few tiles) by one invocation. BASES=1: a
// workgroup per row turns the row's 256 digit totals into exclusive prefixes. No workgroup
// waits on another. Defines: WG (>= 256 for BASES), BASES, SERIAL.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;

#include "sort_push.h"

layout(push_constant, std430) uniform Params { RadixPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer CountBuf { uint v[]; };

shared uint s_tot[WG];

// Inclusive scan of s_tot (every invocation has written its entry).
void scan_totals(uint tid) {
  barrier();
  for (uint off = 1u; off < uint(WG); off <<= 1u) {
    uint left = tid >= off ? s_tot[tid - off] : 0u;
    barrier();
    s_tot[tid] += left;
    barrier();
  }
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  CountBuf hist = CountBuf(pc.hist);
  CountBuf bases = CountBuf(pc.bases);
#if BASES
  for (uint row = gl_WorkGroupID.x; row < pc.rows; row += gl_NumWorkGroups.x) {
    uint v = tid < 256u ? bases.v[row * 256u + tid] : 0u;
    s_tot[tid] = v;
    scan_totals(tid);
    if (tid < 256u) bases.v[row * 256u + tid] = s_tot[tid] - v;
    barrier();
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
      s_tot[tid] = run;
      scan_totals(tid);
      uint prefix = carry + s_tot[tid] - run;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k = t0 + tid * 4u + j;
        if (k < pc.tiles_per_row) hist.v[base + k] = prefix + before[j];
      }
      carry += s_tot[WG - 1];
      barrier();  // s_tot is rewritten by the next tile
    }
    if (tid == 0u) bases.v[seg] = carry;
  }
#endif
}
