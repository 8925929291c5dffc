// Tiled SIMT GEMM: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n], A and B read through strides.
// A workgroup computes a BM x BN tile of C with the tile core of gemm_tile.glsl (shared-memory
// staging, BK steps along k, TM x TN outputs per invocation; conv's implicit GEMM shares it);
// this file loads the tiles (zero outside the matrices) and stores C. Split-K
// (pc.splits > 1): grid z also splits k; the sums go to pc.part_addr for dot_split_sum.comp.
// Slices (SLICES > 1): the workgroup splits k itself, SLICES groups of invocations taking
// pc.k_chunk each, and adds their sums up as dot_split_sum.comp adds splits (the same bits
// as split-K of the same chunks, without the second pass).
// On a CPU driver (for what gemm_rows.comp does not take) the host picks RY = 1 (BM == TM):
// the A values an invocation reads are then at the same address in every lane.
// Defines: BM, BN, BK, TM, TN; ACC (accumulator), ZERO, MAC(acc, a, b); A_/B_/C_STORE and
// _ALIGN; LOAD_A(x), LOAD_B(x) (stored -> ACC), STORE_OUT(v); A_K_UNIT (sa_k == 1: the A tile
// is read along k), B_N_UNIT (sb_n == 1: the B tile is read along n); VEC4_SHARED with ACC4;
// A_VEC4, B_VEC4, WARP_X, SLICES (gemm_tile.glsl); EPILOGUE (dot_epilogue.glsl); ONE_TILE (the
// grid is exactly the tiles by the (batch, split) pairs: no loops over them); TILES_INSIDE
// (every tile and k step lies wholly inside: no edge checks); DOT_PROLOGUE (dot_prologue.cpp:
// LOAD_A / LOAD_B read through generated functions).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
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

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { GemmPush pc; };

layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { B_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { C_STORE v[]; };
layout(buffer_reference, std430) writeonly buffer PartBuf { ACC v[]; };

// Operand prologues (ops/dot/dot_prologue.cpp): the functions LOAD_A and LOAD_B read through; the
// first part of the generated code where there is an epilogue too.
#ifdef DOT_PROLOGUE
#define NXV_CHAIN_ZERO (pc.k_chunk >> 31u)
#include "nxv_generated.glsl"
#undef NXV_CHAIN_ZERO
#endif
#include "dot_epilogue.glsl"

#include "gemm_tile.glsl"

// What fetch_tiles reads: the operands, where this batch's matrices start, the tile's corner.
struct TileCtx {
  ABuf a;
  BBuf b;
  uint abase, bbase, m0, n0;
};

#include "gemm_tile_loop.glsl"

// A's item at row gm, k gk (its first element, for vectors).
A_REG load_a_item(TileCtx ctx, uint gm, uint gk) {
#if A_VEC4 && A_K_UNIT
  return LOAD_A4(A4Buf(pc.a_addr).v[(ctx.abase + gm * pc.sa_m + gk) / 4u]);
#elif A_VEC4
  return LOAD_A4(A4Buf(pc.a_addr).v[(ctx.abase + gm + gk * pc.sa_k) / 4u]);
#elif A_K_UNIT
  return LOAD_A(ctx.a.v[ctx.abase + gm * pc.sa_m + gk]);
#else
  return LOAD_A(ctx.a.v[ctx.abase + gm * pc.sa_m + gk * pc.sa_k]);
#endif
}

// This invocation's share of the A and B tiles at k0, zero outside the matrices (consecutive
// invocations read consecutive elements or vectors where a stride is 1). A tile wholly inside
// (the common case) is read without the checks.
void fetch_tiles(TileCtx ctx, uint k0, uint k_end, uint t, out A_REG ra[LA], out B_REG rb[LB]) {
  if (INSIDE || (ctx.m0 + BM <= pc.m && k0 + BK <= k_end && NA % WG == 0u)) {
    [[unroll]] for (uint l = 0u; l < LA; ++l) {
      uint mm, kk;
      tile_a_at(t, l, mm, kk);
      ra[l] = load_a_item(ctx, ctx.m0 + mm, k0 + kk);
    }
  } else {
    [[unroll]] for (uint l = 0u; l < LA; ++l) {
      uint e = t + l * WG, mm, kk;
      tile_a_at(t, l, mm, kk);
      uint gm = ctx.m0 + mm, gk = k0 + kk;
      A_REG v = A_REG(ZERO);
      if ((NA % WG == 0u || e < NA) && gm < pc.m && gk < k_end) v = load_a_item(ctx, gm, gk);
      ra[l] = v;
    }
  }
  fetch_b_tile(ctx, k0, k_end, t, rb);
}

#if SLICES > 1
#if VEC4_SHARED
#define GET_B(i) sb4[(i) / 4u][(i) % 4u]
#else
#define GET_B(i) sb[i]
#endif
// Where output f (i * TN + j) of invocation t of a slice goes in the staged B words while the
// slices' sums are added (the host sees that BM * BN of them fit: the tile's sums go there too).
uint slice_word(uint f, uint t) {
#if VEC4_SHARED
  return ((f / 4u) * WG + t) * 4u + f % 4u;
#else
  return f * WG + t;
#endif
}

// Slice 0's acc becomes the sum of every slice's, added as dot_split_sum.comp adds splits:
// from zero, then each slice's in order.
void add_slices(uint slice, uint t, inout ACC acc[TM][TN]) {
  if (slice == 0u)
    [[unroll]] for (uint i = 0u; i < TM; ++i)
      [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ZERO + acc[i][j];
  for (uint s = 1u; s < uint(SLICES); ++s) {
    if (slice == s)
      [[unroll]] for (uint i = 0u; i < TM; ++i)
        [[unroll]] for (uint j = 0u; j < TN; ++j) PUT_B(slice_word(i * TN + j, t), acc[i][j]);
    barrier();
    if (slice == 0u)
      [[unroll]] for (uint i = 0u; i < TM; ++i)
        [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] += GET_B(slice_word(i * TN + j, t));
    barrier();
  }
}
#endif

// C's tile (tm, tn) of grid z's (batch, split) pair.
void output_tile(ABuf a, BBuf b, CBuf c, PartBuf part, uint t, uint tx, uint ty, uint z, uint tm, uint tn) {
  uint bz = z / pc.splits, split = z % pc.splits;
#if SLICES > 1
  uint slice = gl_LocalInvocationID.x / WG;
  uint k_begin = slice * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
#else
  uint k_begin = split * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
#endif
  uint abase = bz * pc.sa_batch, bbase = bz * pc.sb_batch, cbase = bz * pc.m * pc.n;
  uint pbase = (split * pc.batch + bz) * pc.m * pc.n;
  uint m0 = tm * BM, n0 = tn * BN;
  ACC acc[TM][TN];
  [[unroll]] for (uint i = 0u; i < TM; ++i)
    [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ZERO;
#if SLICES > 1
  gemm_slice_accumulate(TileCtx(a, b, abase, bbase, m0, n0), k_begin, k_end, (pc.k_chunk + BK - 1u) / BK, slice, t,
                        tx, ty, acc);
  add_slices(slice, t, acc);
  // Every invocation of the workgroup then stores a share of the tile, row by row (an
  // epilogue's reads spread over all of them, the stores coalesced).
  if (slice == 0u)
    [[unroll]] for (uint i = 0u; i < TM; ++i)
      [[unroll]] for (uint j = 0u; j < TN; ++j) PUT_B(ROW(i) * BN + COL(j), acc[i][j]);
  barrier();
  // Every result first, then the stores: an epilogue's reads are then in flight together rather
  // than each waiting for the store before it (which the compiler cannot show they do not alias).
  const uint SHARE = (BM * BN + uint(SLICES) * WG - 1u) / (uint(SLICES) * WG);
  RESULT_REG shared_results[SHARE];
  [[unroll]] for (uint q = 0u; q < SHARE; ++q) {
    uint e = gl_LocalInvocationID.x + q * uint(SLICES) * WG;
    uint gm = m0 + e / BN, gn = n0 + e % BN;
    if (e < BM * BN && (INSIDE || (gm < pc.m && gn < pc.n))) shared_results[q] = RESULT_AT(bz, gm, gn, GET_B(e));
  }
  [[unroll]] for (uint q = 0u; q < SHARE; ++q) {
    uint e = gl_LocalInvocationID.x + q * uint(SLICES) * WG;
    uint gm = m0 + e / BN, gn = n0 + e % BN;
    if (e < BM * BN && (INSIDE || (gm < pc.m && gn < pc.n))) c.v[cbase + gm * pc.n + gn] = STORE_REG(shared_results[q]);
  }
  barrier();  // (the next tile's stages overwrite these words)
  return;
#else
  gemm_tile_accumulate(TileCtx(a, b, abase, bbase, m0, n0), k_begin, k_end, t, tx, ty, acc);
#endif
  if (pc.splits > 1u) {
    [[unroll]] for (uint i = 0u; i < TM; ++i) {
      uint gm = m0 + ROW(i);
      [[unroll]] for (uint j = 0u; j < TN; ++j) {
        uint gn = n0 + COL(j);
        if (INSIDE || (gm < pc.m && gn < pc.n)) part.v[pbase + gm * pc.n + gn] = acc[i][j];
      }
    }
    return;
  }
  // Every result first, then the stores (as above).
  RESULT_REG results[TM][TN];
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    uint gm = m0 + ROW(i);
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      uint gn = n0 + COL(j);
      if (INSIDE || (gm < pc.m && gn < pc.n)) results[i][j] = RESULT_AT(bz, gm, gn, acc[i][j]);
    }
  }
  [[unroll]] for (uint i = 0u; i < TM; ++i) {
    uint gm = m0 + ROW(i);
    [[unroll]] for (uint j = 0u; j < TN; ++j) {
      uint gn = n0 + COL(j);
      if (INSIDE || (gm < pc.m && gn < pc.n)) c.v[cbase + gm * pc.n + gn] = STORE_REG(results[i][j]);
    }
  }
}

void main() {
  ABuf a = ABuf(pc.a_addr);
  BBuf b = BBuf(pc.b_addr);
  CBuf c = CBuf(pc.c_addr);
  PartBuf part = PartBuf(pc.part_addr);
  uint t = gl_LocalInvocationID.x % WG;  // within its slice
  uint tx, ty;
  gemm_lane_xy(t, tx, ty);
#if ONE_TILE
  // The grid is exactly the tiles by the (batch, split) pairs.
  output_tile(a, b, c, part, t, tx, ty, gl_WorkGroupID.z, gl_WorkGroupID.y, gl_WorkGroupID.x);
#else
  uint tiles_n = (pc.n + BN - 1u) / BN, tiles_m = (pc.m + BM - 1u) / BM;
  // Grid z runs over (batch, split) pairs.
  for (uint z = gl_WorkGroupID.z; z < pc.batch * pc.splits; z += gl_NumWorkGroups.z)
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y)
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x)
        output_tile(a, b, c, part, t, tx, ty, z, tm, tn);
#endif
}
