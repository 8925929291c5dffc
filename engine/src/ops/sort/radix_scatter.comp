// LSD radix sort, digit pass 3 of 3: every tile moves its keys (and, with ARG, their indices) to
// their places for this digit, stably. The tile goes by in ITEMS rounds of WG consecutive keys;
// in each round a key's rank among the earlier keys of its digit is its rank within its group of
// invocations (a subgroup, matched by ballots on the digit's bits, or with MATCH_SHARED a group
// of GROUP invocations compared through shared memory) plus the counts of the earlier groups.
// Destination = the row's digit base + the tile's prefix (radix_scan.comp) + the keys of the
// digit already placed by this tile + that rank. No workgroup waits on another.
// Defines: WG, ITEMS, GROUPS (most groups per workgroup), MATCH_SHARED, GROUP, RAW, RAW_ALIGN,
// ARG, FIRST (indices are the positions in the row), LAST (ARG: write only the indices, in
// OUT_STORE through STORE_IDX(v)), and sort_keys.glsl's.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if !MATCH_SHARED
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#if NXV_STORAGE8
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if NXV_STORAGE16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if NXV_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x_id = 0) in;

#include "sort_push.h"
#include "sort_keys.glsl"

layout(push_constant, std430) uniform Params { RadixPush pc; };
layout(buffer_reference, std430, buffer_reference_align = RAW_ALIGN) readonly buffer KeyIn { RAW v[]; };
layout(buffer_reference, std430, buffer_reference_align = RAW_ALIGN) writeonly buffer KeyOut { RAW v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer UintIn { uint v[]; };
#if ARG && LAST
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer IdxOut { OUT_STORE v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer IdxOut { uint v[]; };
#endif

const uint kNone = 256u;  // the digit of a slot past the end of the row

shared uint s_next[256];             // where the tile's next key of each digit goes
shared uint s_count[GROUPS * 256];  // per round: each group's count of each digit, then its start
#if MATCH_SHARED
shared uint s_digit[WG];
#endif

void main() {
  uint tid = gl_LocalInvocationID.x;
  KeyIn keys_in = KeyIn(pc.keys_in);
  KeyOut keys_out = KeyOut(pc.keys_out);
  UintIn hist = UintIn(pc.hist);
  UintIn bases = UintIn(pc.bases);
#if ARG
  UintIn idx_in = UintIn(pc.idx_in);
  IdxOut idx_out = IdxOut(pc.idx_out);
#endif
#if MATCH_SHARED
  uint group = tid / uint(GROUP), groups = uint(WG) / uint(GROUP);
#else
  uint group = gl_SubgroupID, groups = gl_NumSubgroups;
#endif
  uint tiles = pc.rows * pc.tiles_per_row;
  for (uint tile = gl_WorkGroupID.x; tile < tiles; tile += gl_NumWorkGroups.x) {
    uint row = tile / pc.tiles_per_row, t = tile - row * pc.tiles_per_row;
    uint base = row * pc.n;
    for (uint d = tid; d < 256u; d += uint(WG))
      s_next[d] = bases.v[row * 256u + d] + hist.v[(row * 256u + d) * pc.tiles_per_row + t];
    uint start = t * pc.tile, end = min(start + pc.tile, pc.n);
    for (uint r = 0u; r < uint(ITEMS); ++r) {
      uint k = start + r * uint(WG) + tid;
      bool valid = k < end;
      RAW key = RAW(0);
      uint digit = kNone;
      if (valid) {
        key = keys_in.v[base + k];
        digit = nxv_sort_digit(KEY(key), pc.shift);
      }
      for (uint j = tid; j < groups * 256u; j += uint(WG)) s_count[j] = 0u;
#if MATCH_SHARED
      s_digit[tid] = digit;
#endif
      barrier();
      // rank: earlier invocations of the group with the same digit; last: no later one has it.
      uint rank = 0u;
      bool last = true;
#if MATCH_SHARED
      uint g0 = group * uint(GROUP);
      for (uint j = g0; j < g0 + uint(GROUP); ++j) {
        bool same = s_digit[j] == digit;
        if (j < tid && same) ++rank;
        if (j > tid && same) last = false;
      }
#else
      uvec4 peers = subgroupBallot(true);
      [[unroll]] for (uint b = 0u; b < 9u; ++b) {
        bool bit = ((digit >> b) & 1u) != 0u;
        uvec4 ballot = subgroupBallot(bit);
        peers &= bit ? ballot : ~ballot;
      }
      rank = subgroupBallotExclusiveBitCount(peers);
      last = rank + 1u == subgroupBallotBitCount(peers);
#endif
      if (valid && last) s_count[group * 256u + digit] = rank + 1u;
      barrier();
      for (uint d = tid; d < 256u; d += uint(WG)) {
        uint run = s_next[d];
        for (uint g = 0u; g < groups; ++g) {
          uint c = s_count[g * 256u + d];
          s_count[g * 256u + d] = run;
          run += c;
        }
        s_next[d] = run;
      }
      barrier();
      if (valid) {
        uint to = base + s_count[group * 256u + digit] + rank;
#if ARG
        uint idx = FIRST != 0 ? k : idx_in.v[base + k];
#if LAST
        uint v = idx;
        idx_out.v[to] = STORE_IDX(v);
#else
        keys_out.v[to] = key;
        idx_out.v[to] = idx;
#endif
#else
        keys_out.v[to] = key;
#endif
      }
      barrier();  // the next round clears s_count
    }
  }
}
