// The k loop of the tiled SIMT GEMMs (see gemm_tile.glsl): included after gemm_tile.glsl and
// the includer's struct TileCtx; the includer then defines fetch_tiles.
#ifndef NXV_GEMM_TILE_LOOP_GLSL
#define NXV_GEMM_TILE_LOOP_GLSL

void fetch_tiles(TileCtx ctx, uint k0, uint k_end, uint t, out ACC ra[LA], out ACC rb[LB]);

// acc[i][j] += sum over k in [k_begin, k_end) of A[ROW(i), k] * B[k, COL(j)], in order of k.
// Called by the whole workgroup alike (it synchronises on barriers).
void gemm_tile_accumulate(TileCtx ctx, uint k_begin, uint k_end, uint t, uint tx, uint ty,
                          inout ACC acc[TM][TN]) {
  ACC ra[LA], rb[LB];
  fetch_tiles(ctx, k_begin, k_end, t, ra, rb);
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    stash_tiles(t, ra, rb);
    barrier();
    // The next tiles' loads are in flight while this one is multiplied.
    if (k0 + BK < k_end) fetch_tiles(ctx, k0 + BK, k_end, t, ra, rb);
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
}

#endif
