// Tiled SIMT GEMM: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n], A and B read through strides.
// A workgroup computes a BM x BN tile of C: per step of BK along k it stages the A and B
// tiles in shared memory (in the accumulator type, zero outside the matrices; the next step's
// loads go out before this step's arithmetic), then every invocation accumulates its TM x TN
// outputs: rows ty + i * RY and columns tx + j * RX
// (interleaved: neighbouring invocations read neighbouring shared words), or with
// VEC4_SHARED groups of four adjacent rows and columns read as vectors (a quarter of the
// shared-memory loads; 32-bit accumulators). Each output accumulates along k in order, once
// per product (fma for floats). Split-K (pc.splits > 1): grid z also splits k; the sums go
// to pc.part_addr for dot_split_sum.comp.
// On a CPU driver (for what gemm_rows.comp does not take) the host picks RY = 1 (BM == TM):
// the A values an invocation reads are then at the same address in every lane.
// Defines: BM, BN, BK, TM, TN; ACC (accumulator), ZERO, MAC(acc, a, b); A_/B_/C_STORE and
// _ALIGN; LOAD_A(x), LOAD_B(x) (stored -> ACC), STORE_OUT(v); A_K_UNIT (sa_k == 1: the A tile
// is read along k), B_N_UNIT (sb_n == 1: the B tile is read along n); VEC4_SHARED with ACC4.
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

const uint RX = BN / TN;  // invocations along n
const uint RY = BM / TM;  // invocations along m
const uint WG = RX * RY;
#if VEC4_SHARED
// An invocation's rows: TM / 4 groups of four adjacent rows, BM / (TM / 4) apart (likewise
// its columns), so that the compute loop reads each group from shared memory as one vector.
const uint GM = TM / 4u, GN = TN / 4u;
const uint PAD = 4u;  // keeps staged rows 16-byte aligned
#define ROW(i) (((i) / 4u) * (BM / GM) + ty * 4u + (i) % 4u)
#define COL(j) (((j) / 4u) * (BN / GN) + tx * 4u + (j) % 4u)
#else
// An invocation's rows ty + i * RY and columns tx + j * RX (interleaved).
const uint PAD = 1u;
#define ROW(i) (ty + (i) * RY)
#define COL(j) (tx + (j) * RX)
#endif
// Row pitches of the staged tiles, padded where the tile is written along k (the stores of
// neighbouring invocations then fall in different banks).
#if A_K_UNIT
const uint PA = BM + PAD;
#else
const uint PA = BM;
#endif
#if B_N_UNIT
const uint PB = BN;
#else
const uint PB = BN + PAD;
#endif
#if VEC4_SHARED
shared ACC4 sa4[BK * PA / 4u];  // [k][m]
shared ACC4 sb4[BK * PB / 4u];  // [k][n]
#define PUT_A(i, v) sa4[(i) / 4u][(i) % 4u] = v
#define PUT_B(i, v) sb4[(i) / 4u][(i) % 4u] = v
#else
shared ACC sa[BK * PA];  // [k][m]
shared ACC sb[BK * PB];  // [k][n]
#define PUT_A(i, v) sa[i] = v
#define PUT_B(i, v) sb[i] = v
#endif

// Staging, through registers: fetch_tiles loads this invocation's share of the A and B tiles
// at k0 (zero outside the matrices; consecutive invocations read consecutive elements where a
// stride is 1), stash_tiles writes it to shared memory. The main loop fetches the next tiles
// before it multiplies the current ones, so their loads overlap the arithmetic.
const uint LA = (BM * BK + WG - 1u) / WG, LB = (BN * BK + WG - 1u) / WG;

void fetch_tiles(ABuf a, BBuf b, uint abase, uint bbase, uint m0, uint n0, uint k0, uint k_end, uint t,
                 out ACC ra[LA], out ACC rb[LB]) {
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint e = t + l * WG;
#if A_K_UNIT
    uint kk = e % BK, mm = e / BK;
#else
    uint kk = e / BM, mm = e % BM;
#endif
    uint gm = m0 + mm, gk = k0 + kk;
    ACC v = ZERO;
#if A_K_UNIT
    if (e < BM * BK && gm < pc.m && gk < k_end) v = LOAD_A(a.v[abase + gm * pc.sa_m + gk]);
#else
    if (e < BM * BK && gm < pc.m && gk < k_end) v = LOAD_A(a.v[abase + gm * pc.sa_m + gk * pc.sa_k]);
#endif
    ra[l] = v;
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint e = t + l * WG;
#if B_N_UNIT
    uint kk = e / BN, nn = e % BN;
#else
    uint kk = e % BK, nn = e / BK;
#endif
    uint gn = n0 + nn, gk = k0 + kk;
    ACC v = ZERO;
#if B_N_UNIT
    if (e < BN * BK && gn < pc.n && gk < k_end) v = LOAD_B(b.v[bbase + gk * pc.sb_k + gn]);
#else
    if (e < BN * BK && gn < pc.n && gk < k_end) v = LOAD_B(b.v[bbase + gk * pc.sb_k + gn * pc.sb_n]);
#endif
    rb[l] = v;
  }
}

void stash_tiles(uint t, ACC ra[LA], ACC rb[LB]) {
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint e = t + l * WG;
#if A_K_UNIT
    uint kk = e % BK, mm = e / BK;
#else
    uint kk = e / BM, mm = e % BM;
#endif
    if (e < BM * BK) PUT_A(kk * PA + mm, ra[l]);
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint e = t + l * WG;
#if B_N_UNIT
    uint kk = e / BN, nn = e % BN;
#else
    uint kk = e % BK, nn = e / BK;
#endif
    if (e < BN * BK) PUT_B(kk * PB + nn, rb[l]);
  }
}

void main() {
  ABuf a = ABuf(pc.a_addr);
  BBuf b = BBuf(pc.b_addr);
  CBuf c = CBuf(pc.c_addr);
  uint t = gl_LocalInvocationID.x;
  uint tx = t % RX;
  uint ty = RY == 1u ? 0u : t / RX;  // a constant where RY is 1: the same A address in every lane
  uint tiles_n = (pc.n + BN - 1u) / BN, tiles_m = (pc.m + BM - 1u) / BM;
  PartBuf part = PartBuf(pc.part_addr);
  // Grid z runs over (batch, split) pairs.
  for (uint z = gl_WorkGroupID.z; z < pc.batch * pc.splits; z += gl_NumWorkGroups.z) {
    uint bz = z / pc.splits, split = z % pc.splits;
    uint k_begin = split * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
    uint abase = bz * pc.sa_batch, bbase = bz * pc.sb_batch, cbase = bz * pc.m * pc.n;
    uint pbase = (split * pc.batch + bz) * pc.m * pc.n;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint m0 = tm * BM, n0 = tn * BN;
        ACC acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ZERO;
        ACC ra[LA], rb[LB];
        fetch_tiles(a, b, abase, bbase, m0, n0, k_begin, k_end, t, ra, rb);
        for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
          stash_tiles(t, ra, rb);
          barrier();
          // The next tiles' loads are in flight while this one is multiplied.
          if (k0 + BK < k_end) fetch_tiles(a, b, abase, bbase, m0, n0, k0 + BK, k_end, t, ra, rb);
          [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
            ACC av[TM], bv[TN];
#if VEC4_SHARED
            [[unroll]] for (uint g = 0u; g < GM; ++g) {
              ACC4 q = sa4[(kk * PA + g * (BM / GM)) / 4u + ty];
              av[4u * g] = q.x, av[4u * g + 1u] = q.y, av[4u * g + 2u] = q.z, av[4u * g + 3u] = q.w;
            }
            [[unroll]] for (uint g = 0u; g < GN; ++g) {
              ACC4 q = sb4[(kk * PB + g * (BN / GN)) / 4u + tx];
              bv[4u * g] = q.x, bv[4u * g + 1u] = q.y, bv[4u * g + 2u] = q.z, bv[4u * g + 3u] = q.w;
            }
#else
            [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = sa[kk * PA + ROW(i)];
            [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = sb[kk * PB + COL(j)];
#endif
            [[unroll]] for (uint i = 0u; i < TM; ++i)
              [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = MAC(acc[i][j], av[i], bv[j]);
          }
          barrier();
        }
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          uint gm = m0 + ROW(i);
          [[unroll]] for (uint j = 0u; j < TN; ++j) {
            uint gn = n0 + COL(j);
            if (gm < pc.m && gn < pc.n) {
              ACC v = acc[i][j];
              if (pc.splits > 1u) part.v[pbase + gm * pc.n + gn] = v;
              else c.v[cbase + gm * pc.n + gn] = STORE_OUT(v);
            }
          }
        }
      }
    }
  }
}
