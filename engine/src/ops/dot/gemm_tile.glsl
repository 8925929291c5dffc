// The tile core of the tiled SIMT GEMMs (dot's gemm.comp, conv's conv_gemm.comp): a workgroup
// computes a BM x BN tile of C = A * B. Per step of BK along k it stages the A and B tiles in
// shared memory (in the accumulator type; the next step's loads go out before this step's
// arithmetic), then every invocation accumulates its TM x TN outputs: rows ROW(i) and columns
// COL(j) of the tile, interleaved (rows ty + i * RY: neighbouring invocations read neighbouring
// shared words), or with VEC4_SHARED groups of four adjacent rows and columns read as vectors
// (a quarter of the shared-memory loads). Each output accumulates along k in order, once per
// product (MAC: fma for floats).
//
// The including shader defines BM, BN, BK, TM, TN, ACC, ZERO, MAC(acc, a, b), A_K_UNIT (the A
// tile is read along k), B_N_UNIT (the B tile is read along n), VEC4_SHARED (with ACC4),
// A_VEC4 / B_VEC4 (the operand is read from memory in vectors of four along its unit axis,
// with A_VEC, A_VALIGN, LOAD_A4(q) / likewise B: the host checks alignment and that no vector
// straddles an edge) and WARP_X (0, or
// the invocation columns a subgroup of 32 spans: its outputs form a compact block); includes
// this file (constants, shared memory, staging), then defines a struct TileCtx (what its
// loads need; it has bbase and n0, and the push constants have b_addr, n, sb_k, sb_n),
// includes gemm_tile_loop.glsl (the k loop, the B loads) and defines the body of fetch_tiles
// (declared there): it loads this invocation's share of the tiles at k0, item e = t + l * WG
// of each (a scalar, or a vector of four; tile_a_at / tile_b_at give its first element's place
// in the tile), zero outside.
#ifndef NXV_GEMM_TILE_GLSL
#define NXV_GEMM_TILE_GLSL

// TILES_INSIDE (dot's gemm.comp): every tile and k step lies wholly inside the matrices.
#ifndef TILES_INSIDE
#define TILES_INSIDE 0
#endif
const bool INSIDE = TILES_INSIDE != 0;

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

// Invocation t's place among the RX x RY: row-major, or (WARP_X) subgroups of 32 as blocks of
// WARP_X x 32 / WARP_X (fewer distinct shared-memory words per subgroup load).
void gemm_lane_xy(uint t, out uint tx, out uint ty) {
#if WARP_X
  const uint WX = uint(WARP_X), WY = 32u / WX, WARPS_X = RX / WX;
  uint w = t / 32u, lane = t % 32u;
  tx = (w % WARPS_X) * WX + lane % WX;
  ty = (w / WARPS_X) * WY + lane / WX;
#else
  tx = t % RX;
  ty = RY == 1u ? 0u : t / RX;  // a constant where RY is 1: the same A address in every lane
#endif
}

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
// SLICES (dot's gemm.comp): the workgroup is SLICES groups of WG invocations, each summing its
// own part of k into its own stage; the including shader adds the groups' sums up in order.
#ifndef SLICES
#define SLICES 1
#endif
const uint NBUF = uint(SLICES);  // shared-memory stages: one per slice (two for one slice measured no faster on an H100)
const uint SA = BK * PA, SB = BK * PB;  // one stage's words
#if VEC4_SHARED
shared ACC4 sa4[NBUF * SA / 4u];  // [stage][k][m]
shared ACC4 sb4[NBUF * SB / 4u];  // [stage][k][n]
#define PUT_A(i, v) sa4[(i) / 4u][(i) % 4u] = v
#define PUT_B(i, v) sb4[(i) / 4u][(i) % 4u] = v
#define PUT_A4(i, v) sa4[(i) / 4u] = v
#define PUT_B4(i, v) sb4[(i) / 4u] = v
#else
shared ACC sa[NBUF * SA];  // [stage][k][m]
shared ACC sb[NBUF * SB];  // [stage][k][n]
#define PUT_A(i, v) sa[i] = v
#define PUT_B(i, v) sb[i] = v
#define PUT_A4(i, v) sa[i] = (v).x, sa[(i) + 1u] = (v).y, sa[(i) + 2u] = (v).z, sa[(i) + 3u] = (v).w
#define PUT_B4(i, v) sb[i] = (v).x, sb[(i) + 1u] = (v).y, sb[(i) + 2u] = (v).z, sb[(i) + 3u] = (v).w
#endif

#if A_VEC4
const uint AV = 4u;
#define A_REG ACC4
layout(buffer_reference, std430, buffer_reference_align = A_VALIGN) readonly buffer A4Buf { A_VEC v[]; };
#else
const uint AV = 1u;
#define A_REG ACC
#endif
#if B_VEC4
const uint BV = 4u;
#define B_REG ACC4
layout(buffer_reference, std430, buffer_reference_align = B_VALIGN) readonly buffer B4Buf { B_VEC v[]; };
#else
const uint BV = 1u;
#define B_REG ACC
#endif

// Items (scalars or vectors) of the A and B tiles, and how many each invocation loads per step.
const uint NA = BM * BK / AV, NB = BN * BK / BV;
const uint LA = (NA + WG - 1u) / WG, LB = (NB + WG - 1u) / WG;

// Item e = t + l * WG of a tile whose rows hold C items: its place along its row and its row.
// Where the workgroup spans whole rows, l only moves across rows: the compiler then sees each
// item's address as the first one's plus a multiple of l.
#define TILE_ITEM(t, l, C, along, across)                  \
  if (WG % (C) == 0u)                                      \
    along = (t) % (C), across = (t) / (C) + (l) * (WG / (C)); \
  else                                                     \
    along = ((t) + (l) * WG) % (C), across = ((t) + (l) * WG) / (C)

// Item e of the A tile (BM x BK) starts at row mm, k kk: consecutive invocations take
// consecutive k where A is read along k, else consecutive rows. Likewise B (BK x BN).
void tile_a_at(uint t, uint l, out uint mm, out uint kk) {
  uint along, across;
#if A_K_UNIT
  TILE_ITEM(t, l, BK / AV, along, across);
  kk = along * AV, mm = across;
#else
  TILE_ITEM(t, l, BM / AV, along, across);
  mm = along * AV, kk = across;
#endif
}

void tile_b_at(uint t, uint l, out uint kk, out uint nn) {
  uint along, across;
#if B_N_UNIT
  TILE_ITEM(t, l, BN / BV, along, across);
  nn = along * BV, kk = across;
#else
  TILE_ITEM(t, l, BK / BV, along, across);
  kk = along * BV, nn = across;
#endif
}

// Writes the loaded items into stage `stage`: a vector along the staged rows as one (or four)
// words, a vector along k as four words a pitch apart.
void stash_tiles(uint t, uint stage, A_REG ra[LA], B_REG rb[LB]) {
  uint abase = stage * SA, bbase = stage * SB;
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint e = t + l * WG, mm, kk;
    tile_a_at(t, l, mm, kk);
    if (NA % WG == 0u || e < NA) {
#if A_VEC4 && A_K_UNIT
      A_REG v = ra[l];  // (written out: an inner loop here keeps the outer one from unrolling)
      PUT_A(abase + kk * PA + mm, v.x);
      PUT_A(abase + (kk + 1u) * PA + mm, v.y);
      PUT_A(abase + (kk + 2u) * PA + mm, v.z);
      PUT_A(abase + (kk + 3u) * PA + mm, v.w);
#elif A_VEC4
      PUT_A4(abase + kk * PA + mm, ra[l]);
#else
      PUT_A(abase + kk * PA + mm, ra[l]);
#endif
    }
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint e = t + l * WG, kk, nn;
    tile_b_at(t, l, kk, nn);
    if (NB % WG == 0u || e < NB) {
#if B_VEC4 && B_N_UNIT
      PUT_B4(bbase + kk * PB + nn, rb[l]);
#elif B_VEC4
      B_REG v = rb[l];
      PUT_B(bbase + kk * PB + nn, v.x);
      PUT_B(bbase + (kk + 1u) * PB + nn, v.y);
      PUT_B(bbase + (kk + 2u) * PB + nn, v.z);
      PUT_B(bbase + (kk + 3u) * PB + nn, v.w);
#else
      PUT_B(bbase + kk * PB + nn, rb[l]);
#endif
    }
  }
}

#endif
