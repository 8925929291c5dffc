// The tile core of the tiled SIMT GEMMs (dot's gemm.comp, conv's conv_gemm.comp): a workgroup
// computes a BM x BN tile of C = A * B. Per step of BK along k it stages the A and B tiles in
// shared memory (in the accumulator type; the next step's loads go out before this step's
// arithmetic), then every invocation accumulates its TM x TN outputs: rows ROW(i) and columns
// COL(j) of the tile, interleaved (rows ty + i * RY: neighbouring invocations read neighbouring
// shared words), or with VEC4_SHARED groups of four adjacent rows and columns read as vectors
// (a quarter of the shared-memory loads; 32-bit accumulators). Each output accumulates along k
// in order, once per product (MAC: fma for floats).
//
// The including shader defines BM, BN, BK, TM, TN, ACC, ZERO, MAC(acc, a, b), A_K_UNIT (the A
// tile is read along k), B_N_UNIT (the B tile is read along n) and VEC4_SHARED (with ACC4),
// includes this file (constants, shared memory, staging), then defines a struct TileCtx (what
// its loads need), includes gemm_tile_loop.glsl (the k loop) and defines the body of
// fetch_tiles (declared there): it loads this invocation's share of the tiles at k0, element
// e = t + l * WG of each (tile_a_at / tile_b_at give its place in the tile), zero outside.
#ifndef NXV_GEMM_TILE_GLSL
#define NXV_GEMM_TILE_GLSL

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

// Elements of the A and B tiles each invocation loads per step.
const uint LA = (BM * BK + WG - 1u) / WG, LB = (BN * BK + WG - 1u) / WG;

// Element e of the A tile (BM x BK) is at row mm, k kk: consecutive invocations take
// consecutive k where A is read along k, else consecutive rows. Likewise B (BK x BN).
void tile_a_at(uint e, out uint mm, out uint kk) {
#if A_K_UNIT
  kk = e % BK, mm = e / BK;
#else
  kk = e / BM, mm = e % BM;
#endif
}

void tile_b_at(uint e, out uint kk, out uint nn) {
#if B_N_UNIT
  kk = e / BN, nn = e % BN;
#else
  kk = e % BK, nn = e / BK;
#endif
}

void stash_tiles(uint t, ACC ra[LA], ACC rb[LB]) {
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint e = t + l * WG, mm, kk;
    tile_a_at(e, mm, kk);
    if (e < BM * BK) PUT_A(kk * PA + mm, ra[l]);
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint e = t + l * WG, kk, nn;
    tile_b_at(e, kk, nn);
    if (e < BN * BK) PUT_B(kk * PB + nn, rb[l]);
  }
}

#endif
