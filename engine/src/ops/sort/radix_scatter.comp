// LSD radix sort, digit pass 3 of 3: every tile moves its keys (and, with ARG, their indices) to
// their places for this digit, stably, in three steps:
// 1. the tile's keys are loaded into registers: with subgroup ops, each subgroup a run of
//    ITEMS * subgroup size consecutive keys (the runs in order), else ITEMS rounds of WG
//    consecutive keys counted per digit;
// 2. a key's slot in the tile, ordered by digit: with subgroup ops, each subgroup ranks its run's
//    keys round by round against its own digit counters (peers matched by ballots on the
//    digit's bits), then the counters of the earlier subgroups and the digits' starts are
//    added; with MATCH_SHARED, round by round, a key's rank within its group of GROUP
//    invocations (compared through shared memory) plus the counts of the earlier groups and
//    rounds;
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
#extension GL_KHR_shader_subgroup_arithmetic : require
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
shared uint s_next[256];   // the digit's next free slot (also scratch of the digit scan)
shared uint s_out[256];    // where the tile's run of the digit goes in the row
#if MATCH_SHARED
shared uint s_start[256];  // the digit's first slot in the tile
shared uint s_digit[WG];
#else
shared uint s_part[64];  // each subgroup's sum of its digits' counts
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

#if MATCH_SHARED
// The exclusive scan of the tile's digit counts in s_start into s_next (Hillis-Steele on the
// counts shifted by one, ping-ponging between s_next and s_start); s_out[d] becomes the row
// position of the tile's slot 0 as digit d's (slot s of digit d goes to s_out[d] + s).
void exclusive_digit_scan() {
  uint tid = gl_LocalInvocationID.x;
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
  for (uint d = tid; d < 256u; d += uint(WG)) s_out[d] -= s_next[d];
}
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
    uint start = t * pc.tile, end = min(start + pc.tile, pc.n);

#if MATCH_SHARED
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
    exclusive_digit_scan();

    // 2. Slots, round by round.
    uint slot[ITEMS];
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      for (uint j = tid; j < groups * 256u; j += uint(WG)) s_buf[j] = 0u;
      s_digit[tid] = digit[r];
      barrier();
      // rank: earlier invocations of the group with the same digit; last: no later one has it.
      uint rank = 0u;
      bool last = true;
      uint g0 = group * uint(GROUP);
      for (uint j = g0; j < g0 + uint(GROUP); ++j) {
        bool same = s_digit[j] == digit[r];
        if (j < tid && same) ++rank;
        if (j > tid && same) last = false;
      }
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
#else
    // 1. Load: subgroup g takes the tile's g-th run of ITEMS * subgroup size keys, round r its
    // r-th subgroup-wide part, so that the subgroups' runs follow one another in key order.
    // Registers hold the keys and their slots only (a key's digit is recomputed where needed).
    const uint lane = gl_SubgroupInvocationID, run_len = uint(ITEMS) * gl_SubgroupSize;
    const uint first_k = start + group * run_len + lane;
    for (uint d = tid; d < 256u; d += uint(WG))
      s_out[d] = bases.v[row * 256u + d] + hist.v[(row * 256u + d) * pc.tiles_per_row + t];
    for (uint j = tid; j < groups * 256u; j += uint(WG)) s_buf[j] = 0u;
    RAW key[ITEMS];
#if ARG
    uint idx[ITEMS];
#endif
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      uint k = first_k + r * gl_SubgroupSize;
      key[r] = k < end ? keys_in.v[base + k] : RAW(0);
#if ARG
      idx[r] = k < end ? (FIRST != 0 ? k : idx_in.v[base + k]) : 0u;
#endif
    }
    barrier();

    // 2. Each subgroup ranks its keys among its earlier ones of the same digit, round by round,
    // against its own digit counters (no workgroup barrier): the peers of a key are found by
    // ballots on the digit's bits; the last peer adds the round's count.
    // A full tile has no slot past the row's end (kNone's ninth bit).
    uint slot[ITEMS];
    bool full = end - start == kTile;
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      uint digit = first_k + r * gl_SubgroupSize < end ? nxv_sort_digit(KEY(key[r]), pc.shift) : kNone;
      uvec4 peers = subgroupBallot(true);
      [[unroll]] for (uint b = 0u; b < 8u; ++b) {
        bool bit = ((digit >> b) & 1u) != 0u;
        uvec4 ballot = subgroupBallot(bit);
        peers &= bit ? ballot : ~ballot;
      }
      if (!full) {
        bool bit = digit == kNone;
        uvec4 ballot = subgroupBallot(bit);
        peers &= bit ? ballot : ~ballot;
      }
      uint rank = subgroupBallotExclusiveBitCount(peers), count = subgroupBallotBitCount(peers);
      uint before = digit != kNone ? s_buf[group * 256u + digit] : 0u;
      subgroupBarrier();
      if (digit != kNone && rank + 1u == count) s_buf[group * 256u + digit] = before + count;
      subgroupBarrier();
      slot[r] = before + rank;
    }
    barrier();
    // Each digit's count over the subgroups, earlier subgroups first; then the digits' starts in
    // the tile by subgroup scans over the invocations' runs of 256 / WG digits, and the row
    // position of the tile's slot 0 as each digit's (as exclusive_digit_scan gives them).
    const uint per = 256u / uint(WG);
    uint counts[4];
    uint sum = 0u;
    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
      if (q < per) {
        uint d = tid * per + q, run = 0u;
        for (uint g = 0u; g < groups; ++g) {
          uint c = s_buf[g * 256u + d];
          s_buf[g * 256u + d] = run;
          run += c;
        }
        counts[q] = run;
        sum += run;
      }
    }
    uint first = subgroupExclusiveAdd(sum);
    if (gl_SubgroupInvocationID == gl_SubgroupSize - 1u) s_part[gl_SubgroupID] = first + sum;
    barrier();
    for (uint g = 0u; g < gl_SubgroupID; ++g) first += s_part[g];
    [[unroll]] for (uint q = 0u; q < 4u; ++q) {
      if (q < per) {
        uint d = tid * per + q;
        s_next[d] = first;
        s_out[d] -= first;
        first += counts[q];
      }
    }
    barrier();
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      uint digit = nxv_sort_digit(KEY(key[r]), pc.shift);
      slot[r] += s_next[digit] + s_buf[group * 256u + digit];
    }
    barrier();  // step 3 writes over the counters
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      if (first_k + r * gl_SubgroupSize < end) {
        put_key(slot[r], key[r]);
#if ARG
        s_buf[uint(KW) * kTile + slot[r]] = idx[r];
#endif
      }
    }
#endif

    // 3. Place by slot (above, with subgroup ops), write out in slot order.
#if MATCH_SHARED
    [[unroll]] for (uint r = 0u; r < uint(ITEMS); ++r) {
      if (digit[r] != kNone) {
        put_key(slot[r], key[r]);
#if ARG
        s_buf[uint(KW) * kTile + slot[r]] = idx[r];
#endif
      }
    }
#endif
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
