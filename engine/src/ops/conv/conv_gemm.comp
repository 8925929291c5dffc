// conv's implicit GEMM (conv_push.h): per group, C[m, n] = sum_k A[m, k] * B[k, n] on the tile
// core of dot's GEMM (gemm_tile.glsl, gemm_tile_loop.glsl). A is never materialised: each A
// element (m, k), m = (batch item, output position p), k = (kernel position q, channel c), is
// gathered from the input at p * stride - pad_lo + q * kdil in the dilated input's coordinates,
// zero outside the input or (input dilation) between its elements. An invocation decomposes
// the rows of its A-tile slots once per tile; a kernel position is one row of the parameter
// block's table, read once per step for the whole workgroup where channels per group are a
// multiple of BK (KALIGN). C goes to the output through its strides (any output permutation),
// or with split-K to part[split * total + output offset] for dot_split_sum.comp.
// Defines: the tile core's (BM, BN, BK, TM, TN, ACC, ZERO, MAC, A_K_UNIT: the A tile is read
// along k, the input's channels being adjacent; B_N_UNIT; VEC4_SHARED, ACC4; A_VEC4: four
// adjacent channels per load; B_VEC4, WARP_X); NR (spatial
// axes); IDIL (an input dilation > 1); KALIGN; A_/B_/C_STORE and _ALIGN; LOAD_A(x), LOAD_B(x),
// STORE_OUT(v); EPILOGUE (offset_epilogue.glsl: an elementwise chain where C is stored).
// IM2COL: no product; A itself goes to C, row-major [group, m, k] (C of the input's type), for
// dot's cooperative-matrix GEMM to multiply (conv_im2col.cpp).
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
#ifndef IM2COL
#define IM2COL 0
#endif

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "nxv_fastdiv.glsl"
#include "conv_push.h"

layout(push_constant, std430) uniform Params { ConvPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ParamBuf {
  ConvParams p;
  int table[];  // NXV_CONV_TABLE_ROW(NR) ints per kernel position
};
layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { B_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { C_STORE v[]; };
layout(buffer_reference, std430) writeonly buffer PartBuf { ACC v[]; };
#define NXV_EPILOGUE_PARAMS (ParamBuf(pc.params_addr).p.epi)
#include "offset_epilogue.glsl"

const uint TROW = NXV_CONV_TABLE_ROW(NR);

#include "gemm_tile.glsl"

// Distinct A-tile rows an invocation loads per step: one where the tile is read along m and
// the workgroup spans whole columns of it (its every item then has row t % BM), else one per
// item. RSLOT(l): item l's row.
#if !A_K_UNIT
const uint LR = WG % BM == 0u ? 1u : LA;
#else
const uint LR = LA;
#endif
#define RSLOT(l) (LR == 1u ? 0u : (l))

// What fetch_tiles reads: the operands and the geometry (in registers), B's group base and
// the tile's first filter, and per A-tile slot of this invocation its row's input offset
// (batch item and group; without input dilation also the window's corner), the window's
// corner in the dilated input per axis, and whether the row exists.
struct TileCtx {
  ABuf a;
  BBuf b;
  ParamBuf P;
  uint bbase, n0;
  int in_c;
  uint ci, ci_magic, ci_shift;
  int in_ext[NR], in_sp[NR];
  uint idil[NR], idil_magic[NR], idil_shift[NR];
  int row_off[LR];
  int corner[LR * NR];
  bool row_ok[LR];
};

#include "gemm_tile_loop.glsl"

void fetch_tiles(TileCtx ctx, uint k0, uint k_end, uint t, out A_REG ra[LA], out B_REG rb[LB]) {
#if KALIGN
  // The step's BK values of k share one kernel position: BK divides ci and every split.
  uint q0 = nxv_fastdiv(k0, ctx.ci_magic, ctx.ci_shift);
  uint c0 = k0 - q0 * ctx.ci;
  int dq0[TROW];
  [[unroll]] for (uint d = 0u; d < TROW; ++d) dq0[d] = k0 < k_end ? ctx.P.table[q0 * TROW + d] : 0;
#endif
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint e = t + l * WG, mm, kk;
    tile_a_at(t, l, mm, kk);
    uint gk = k0 + kk, r = RSLOT(l);
    A_REG v = A_REG(ZERO);
    // No loop inside a branch here: spirv-opt then leaves the loop over l rolled, and ra in an
    // indexed (local-memory) array.
    bool ok = (NA % WG == 0u || e < NA) && ctx.row_ok[r] && gk < k_end;
#if KALIGN
    uint c = c0 + kk;
    int dq[TROW] = dq0;
#else
    uint q = nxv_fastdiv(ok ? gk : 0u, ctx.ci_magic, ctx.ci_shift);
    uint c = gk - q * ctx.ci;
    int dq[TROW];
    [[unroll]] for (uint d = 0u; d < TROW; ++d) dq[d] = ctx.P.table[q * TROW + d];
#endif
#if IDIL
    int off = ctx.row_off[r] + int(c) * ctx.in_c;
    [[unroll]] for (uint d = 0u; d < NR; ++d) {
      int x = ctx.corner[r * NR + d] + dq[d + 1u];
      uint xi = nxv_fastdiv(uint(max(x, 0)), ctx.idil_magic[d], ctx.idil_shift[d]);
      ok = ok && x >= 0 && x < ctx.in_ext[d] && xi * ctx.idil[d] == uint(x);
      off += int(xi) * ctx.in_sp[d];
    }
#else
    int off = ctx.row_off[r] + dq[0] + int(c) * ctx.in_c;
    [[unroll]] for (uint d = 0u; d < NR; ++d) ok = ok && uint(ctx.corner[r * NR + d] + dq[d + 1u]) < uint(ctx.in_ext[d]);
#endif
#if A_VEC4
    // Four adjacent channels (the host checks that strides and offset are multiples of 4).
    if (ok) v = LOAD_A4(A4Buf(pc.in_addr).v[uint(off) / 4u]);
#else
    if (ok) v = LOAD_A(ctx.a.v[off]);
#endif
    ra[l] = v;
  }
#if !IM2COL
  fetch_b_tile(ctx, k0, k_end, t, rb);
#endif
}

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  CBuf c = CBuf(pc.c_addr);
  PartBuf part = PartBuf(pc.part_addr);
  uint t = gl_LocalInvocationID.x;
  uint tx, ty;
  gemm_lane_xy(t, tx, ty);
  uint tiles_n = (pc.n + BN - 1u) / BN, tiles_m = (pc.m + BM - 1u) / BM;
  TileCtx ctx;
  ctx.a = ABuf(pc.in_addr);
  ctx.b = BBuf(pc.b_addr);
  ctx.P = P;
  ctx.in_c = P.p.in_c;
  ctx.ci = P.p.ci, ctx.ci_magic = P.p.ci_magic, ctx.ci_shift = P.p.ci_shift;
  uint positions = P.p.positions, pos_magic = P.p.pos_magic, pos_shift = P.p.pos_shift;
  uint out_ext[NR], out_magic[NR], out_shift[NR], out_sp[NR];
  int stride[NR], pad_lo[NR];
  [[unroll]] for (uint d = 0u; d < NR; ++d) {
    ctx.in_ext[d] = P.p.in_ext[d], ctx.in_sp[d] = P.p.in_sp[d];
    ctx.idil[d] = P.p.idil[d], ctx.idil_magic[d] = P.p.idil_magic[d], ctx.idil_shift[d] = P.p.idil_shift[d];
    out_ext[d] = P.p.out_ext[d], out_magic[d] = P.p.out_magic[d], out_shift[d] = P.p.out_shift[d];
    out_sp[d] = P.p.out_sp[d];
    stride[d] = P.p.stride[d], pad_lo[d] = P.p.pad_lo[d];
  }
  // Grid z runs over (group, split) pairs.
  for (uint z = gl_WorkGroupID.z; z < pc.groups * pc.splits; z += gl_NumWorkGroups.z) {
    uint g = z / pc.splits, split = z % pc.splits;
    uint k_begin = split * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
    int gbase = int(g) * P.p.in_group;
    ctx.bbase = g * pc.sb_group;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      uint m0 = tm * BM;
      // This invocation's A-tile rows: batch item, and the window's corner per axis.
      [[unroll]] for (uint l = 0u; l < LR; ++l) {
        uint e = t + l * WG, mm, kk;
        tile_a_at(t, l, mm, kk);
        uint gm = m0 + mm;
        ctx.row_ok[l] = gm < pc.m;
        uint rest = min(gm, pc.m - 1u);
        uint item = nxv_fastdiv(rest, pos_magic, pos_shift);
        rest -= item * positions;
        int off = gbase + int(item) * P.p.in_n;
        [[unroll]] for (int d = NR - 1; d >= 0; --d) {
          uint q = nxv_fastdiv(rest, out_magic[d], out_shift[d]);
          int x = int(rest - q * out_ext[d]) * stride[d] - pad_lo[d];
          rest = q;
          ctx.corner[l * NR + uint(d)] = x;
#if !IDIL
          off += x * ctx.in_sp[d];
#endif
        }
        ctx.row_off[l] = off;
      }
#if IM2COL
      // The tile's A elements, step by step along k: C[g, m, k].
      for (uint k0 = k_begin + gl_WorkGroupID.x * BK; k0 < k_end; k0 += gl_NumWorkGroups.x * BK) {
        A_REG ra[LA];
        B_REG rb[LB];
        fetch_tiles(ctx, k0, k_end, t, ra, rb);
        [[unroll]] for (uint l = 0u; l < LA; ++l) {
          uint e = t + l * WG, mm, kk;
          tile_a_at(t, l, mm, kk);
          uint gm = m0 + mm, gk = k0 + kk;
          if ((NA % WG == 0u || e < NA) && gm < pc.m && gk < k_end) c.v[(g * pc.m + gm) * pc.k + gk] = STORE_OUT(ra[l]);
        }
      }
#else
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint n0 = tn * BN;
        ctx.n0 = n0;
        ACC acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ZERO;
        gemm_tile_accumulate(ctx, k_begin, k_end, t, tx, ty, acc);
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          // Clamped rather than skipped: a `continue` keeps the loop from unrolling and the
          // accumulators in an indexed (local-memory) array.
          uint gm = m0 + ROW(i);
          bool row_in = gm < pc.m;
          gm = min(gm, pc.m - 1u);
          uint item = nxv_fastdiv(gm, pos_magic, pos_shift);
          uint rest = gm - item * positions;
          uint row = item * P.p.out_n;
          [[unroll]] for (int d = NR - 1; d >= 0; --d) {
            uint q = nxv_fastdiv(rest, out_magic[d], out_shift[d]);
            row += (rest - q * out_ext[d]) * out_sp[d];
            rest = q;
          }
          [[unroll]] for (uint j = 0u; j < TN; ++j) {
            uint gn = n0 + COL(j);
            if (row_in && gn < pc.n) {
              uint o = row + (g * pc.n + gn) * P.p.out_o;
              ACC v = acc[i][j];
              if (pc.splits > 1u) part.v[split * pc.total + o] = v;
              else c.v[o] = STORE_RESULT(o, v);
            }
          }
        }
      }
#endif
    }
  }
}
