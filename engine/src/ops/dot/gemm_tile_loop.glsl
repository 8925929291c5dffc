// The k loop of the tiled SIMT GEMMs (see gemm_tile.glsl): included after gemm_tile.glsl and
// the includer's struct TileCtx; the includer then defines fetch_tiles.
#ifndef NXV_GEMM_TILE_LOOP_GLSL
#define NXV_GEMM_TILE_LOOP_GLSL

void fetch_tiles(TileCtx ctx, uint k0, uint k_end, uint t, out A_REG ra[LA], out B_REG rb[LB]);

// B's item at k gk, column gn (its first element, for vectors).
B_REG load_b_item(TileCtx ctx, uint gk, uint gn) {
#if B_VEC4 && B_N_UNIT
  return LOAD_B4(B4Buf(pc.b_addr).v[(ctx.bbase + gk * pc.sb_k + gn) / 4u]);
#elif B_VEC4
  return LOAD_B4(B4Buf(pc.b_addr).v[(ctx.bbase + gk + gn * pc.sb_n) / 4u]);
#elif B_N_UNIT
  return LOAD_B(ctx.b.v[ctx.bbase + gk * pc.sb_k + gn]);
#else
  return LOAD_B(ctx.b.v[ctx.bbase + gk * pc.sb_k + gn * pc.sb_n]);
#endif
}

// This invocation's share of the B tile at k0 (B[k, n] at ctx.bbase + k * pc.sb_k + n * pc.sb_n
// of pc.b_addr), zero outside; dot and conv read B alike. A tile wholly inside is read without
// the checks.
void fetch_b_tile(TileCtx ctx, uint k0, uint k_end, uint t, out B_REG rb[LB]) {
  if (INSIDE || (ctx.n0 + BN <= pc.n && k0 + BK <= k_end && NB % WG == 0u)) {
    [[unroll]] for (uint l = 0u; l < LB; ++l) {
      uint kk, nn;
      tile_b_at(t, l, kk, nn);
      rb[l] = load_b_item(ctx, k0 + kk, ctx.n0 + nn);
    }
  } else {
    [[unroll]] for (uint l = 0u; l < LB; ++l) {
      uint e = t + l * WG, kk, nn;
      tile_b_at(t, l, kk, nn);
      uint gn = ctx.n0 + nn, gk = k0 + kk;
      B_REG v = B_REG(ZERO);
      if ((NB % WG == 0u || e < NB) && gn < pc.n && gk < k_end) v = load_b_item(ctx, gk, gn);
      rb[l] = v;
    }
  }
}

// acc[i][j] += the products of stage `stage`'s BK values of k.
void multiply_stage(uint stage, uint tx, uint ty, inout ACC acc[TM][TN]) {
  [[unroll]] for (uint kk = 0u; kk < BK; ++kk) {
    ACC av[TM], bv[TN];
#if VEC4_SHARED
    [[unroll]] for (uint g = 0u; g < GM; ++g) {
      ACC4 q = sa4[stage * (SA / 4u) + (kk * PA + g * (BM / GM)) / 4u + ty];
      av[4u * g] = q.x, av[4u * g + 1u] = q.y, av[4u * g + 2u] = q.z, av[4u * g + 3u] = q.w;
    }
    [[unroll]] for (uint g = 0u; g < GN; ++g) {
      ACC4 q = sb4[stage * (SB / 4u) + (kk * PB + g * (BN / GN)) / 4u + tx];
      bv[4u * g] = q.x, bv[4u * g + 1u] = q.y, bv[4u * g + 2u] = q.z, bv[4u * g + 3u] = q.w;
    }
#else
    [[unroll]] for (uint i = 0u; i < TM; ++i) av[i] = sa[stage * SA + kk * PA + ROW(i)];
    [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = sb[stage * SB + kk * PB + COL(j)];
#endif
    [[unroll]] for (uint i = 0u; i < TM; ++i)
      [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = MAC(acc[i][j], av[i], bv[j]);
  }
}

// acc[i][j] += sum over k in [k_begin, k_end) of A[ROW(i), k] * B[k, COL(j)], in order of k.
// Called by the whole workgroup alike (it synchronises on barriers).
void gemm_tile_accumulate(TileCtx ctx, uint k_begin, uint k_end, uint t, uint tx, uint ty,
                          inout ACC acc[TM][TN]) {
  A_REG ra[LA];
  B_REG rb[LB];
  // (Without edge checks an empty split must not read.)
  if (!INSIDE || k_begin < k_end) fetch_tiles(ctx, k_begin, k_end, t, ra, rb);
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    stash_tiles(t, 0u, ra, rb);
    barrier();
    // The next tiles' loads are in flight while this one is multiplied.
    if (k0 + BK < k_end) fetch_tiles(ctx, k0 + BK, k_end, t, ra, rb);
    multiply_stage(0u, tx, ty, acc);
    barrier();
  }
}

#if SLICES > 1
// The same for one slice of the workgroup, in its own stage: `steps` k steps from k_begin,
// the same count for every slice (the barriers are the whole workgroup's); steps at or past
// k_end neither read nor multiply.
void gemm_slice_accumulate(TileCtx ctx, uint k_begin, uint k_end, uint steps, uint stage, uint t, uint tx, uint ty,
                           inout ACC acc[TM][TN]) {
  A_REG ra[LA];
  B_REG rb[LB];
  if (k_begin < k_end) fetch_tiles(ctx, k_begin, k_end, t, ra, rb);
  for (uint s = 0u; s < steps; ++s) {
    uint k0 = k_begin + s * BK;
    stash_tiles(t, stage, ra, rb);
    barrier();
    if (k0 + BK < k_end) fetch_tiles(ctx, k0 + BK, k_end, t, ra, rb);
    if (k0 < k_end) multiply_stage(stage, tx, ty, acc);
    barrier();
  }
}
#endif

#endif
