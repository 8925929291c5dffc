// LSD radix sort, digit pass 3 of 3: every tile moves its keys (and, with ARG, their indices) to
// their places for this digit, stably, in three steps:
// 1. the tile's ITEMS rounds of WG consecutive keys are loaded into registers and counted per
//    digit; an exclusive scan gives each digit's first slot in the tile;
// 2. round by round, a key's rank among the earlier keys of its digit is its rank within its
//    group of invocations (a subgroup, matched by ballots on the digit's bits, or with
//    MATCH_SHARED a group of GROUP invocations compared through shared memory) plus the counts
//    of the earlier groups and rounds: its slot in the tile, ordered by digit;
// 3. the keys are placed in shared memory by slot and written out in slot order, so that
//    neighbouring invocations write neighbouring addresses of a digit's run: the row's digit
//    base + the tile's prefix (radix_scan.comp) + the slot's offset in the digit's run.
// No workgroup waits on another.
// Defines: WG, ITEMS, GROUPS (most groups per workgroup), MATCH_SHARED, GROUP, KW (words of a
// key in shared memory), SHARED_WORDS, RAW, RAW_ALIGN, ARG, FIRST (indices are the positions in
// the row), LAST (ARG: write only the indices, in OUT_STORE through STORE_IDX(v)), and
// sort_keys.glsl's.
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
const uint kTile = uint(WG) * uint(ITEMS);

// Step 2: each group's count of each digit in the round, then its first slot (GROUPS * 256
// words). Step 3: the tile's keys by slot (KW words each), then with ARG their indices.
shared uint s_buf[SHARED_WORDS];
shared uint s_start[256];  // the digit's first slot in the tile
shared uint s_next[256];   // the digit's next free slot (also scratch of the digit scan)
shared uint s_out[256];    // where the tile's run of the digit goes in the row
#if MATCH_SHARED
shared uint s_digit[WG];
#endif

void put_key(uint slot, RAW key) {
#if KW == 2
  uvec2 w = unpackUint2x32(uint64_t(key));
  s_buf[2u * slot] = w.x;
  s_buf[2u * slot + 1u] = w.y;
#else
  s_buf[slot] = uint(key);
#endif
}

RAW get_key(uint slot) {
#if KW == 2
  return RAW(packUint2x32(uvec2(s_buf[2u * slot], s_buf[2u * slot + 1u])));
#else
  return RAW(s_buf[slot]);
#endif
}

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
    uint start = t * pc.tile, end = min(start + pc.tile, pc.n);

    // 1. Load and count.
    for (uint d = tid; d < 256u; d += uint(WG)) {
      s_start[d] = 0u;
      s_out[d] = bases.v[row * 256u + d] + hist.v[(row * 256u + d) * pc.tiles_per_row + t];
    }
    barrier();
    RAW key[ITEMS];
    uint digit[ITEMS];
#if ARG
    uint idx[ITEMS];
#endif
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      uint k = start + r * uint(WG) + tid;
      key[r] = RAW(0);
      digit[r] = kNone;
#if ARG
      idx[r] = 0u;
#endif
      if (k < end) {
        key[r] = keys_in.v[base + k];
        digit[r] = nxv_sort_digit(KEY(key[r]), pc.shift);
        atomicAdd(s_start[digit[r]], 1u);
#if ARG
        idx[r] = FIRST != 0 ? k : idx_in.v[base + k];
#endif
      }
    }
    barrier();
    // Exclusive scan of the counts (Hillis-Steele on the counts shifted by one, ping-ponging
    // between s_next and s_start; eight steps end in s_next).
    for (uint d = tid; d < 256u; d += uint(WG)) s_next[d] = d > 0u ? s_start[d - 1u] : 0u;
    barrier();
    [[unroll]] for (uint off = 1u; off < 256u; off <<= 1u) {
      bool into_start = off == 1u || off == 4u || off == 16u || off == 64u;
      for (uint d = tid; d < 256u; d += uint(WG)) {
        if (into_start) s_start[d] = s_next[d] + (d >= off ? s_next[d - off] : 0u);
        else s_next[d] = s_start[d] + (d >= off ? s_start[d - off] : 0u);
      }
      barrier();
    }
    for (uint d = tid; d < 256u; d += uint(WG)) {
      s_start[d] = s_next[d];
      s_out[d] -= s_next[d];  // the row position of slot s of digit d: s_out[d] + s
    }

    // 2. Slots, round by round.
    uint slot[ITEMS];
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      for (uint j = tid; j < groups * 256u; j += uint(WG)) s_buf[j] = 0u;
#if MATCH_SHARED
      s_digit[tid] = digit[r];
#endif
      barrier();
      // rank: earlier invocations of the group with the same digit; last: no later one has it.
      uint rank = 0u;
      bool last = true;
#if MATCH_SHARED
      uint g0 = group * uint(GROUP);
      for (uint j = g0; j < g0 + uint(GROUP); ++j) {
        bool same = s_digit[j] == digit[r];
        if (j < tid && same) ++rank;
        if (j > tid && same) last = false;
      }
#else
      uvec4 peers = subgroupBallot(true);
      [[unroll]] for (uint b = 0u; b < 9u; ++b) {
        bool bit = ((digit[r] >> b) & 1u) != 0u;
        uvec4 ballot = subgroupBallot(bit);
        peers &= bit ? ballot : ~ballot;
      }
      rank = subgroupBallotExclusiveBitCount(peers);
      last = rank + 1u == subgroupBallotBitCount(peers);
#endif
      if (digit[r] != kNone && last) s_buf[group * 256u + digit[r]] = rank + 1u;
      barrier();
      for (uint d = tid; d < 256u; d += uint(WG)) {
        uint run = s_next[d];
        for (uint g = 0u; g < groups; ++g) {
          uint c = s_buf[g * 256u + d];
          s_buf[g * 256u + d] = run;
          run += c;
        }
        s_next[d] = run;
      }
      barrier();
      slot[r] = digit[r] != kNone ? s_buf[group * 256u + digit[r]] + rank : 0u;
      barrier();  // the next round clears s_buf
    }

    // 3. Place by slot, write out in slot order.
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      if (digit[r] != kNone) {
        put_key(slot[r], key[r]);
#if ARG
        s_buf[uint(KW) * kTile + slot[r]] = idx[r];
#endif
      }
    }
    barrier();
    for (uint s = tid; s < end - start; s += uint(WG)) {
      RAW k = get_key(s);
      uint to = base + s_out[nxv_sort_digit(KEY(k), pc.shift)] + s;
#if ARG
      uint i = s_buf[uint(KW) * kTile + s];
#if LAST
      uint v = i;
      idx_out.v[to] = STORE_IDX(v);
#else
      keys_out.v[to] = k;
      idx_out.v[to] = i;
#endif
#else
      keys_out.v[to] = k;
#endif
    }
    barrier();  // the next tile reuses the shared arrays
  }
}
