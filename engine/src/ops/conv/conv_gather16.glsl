// conv's A (conv_push.h) 16 bytes at a time: row m of A, V = 16 / element size consecutive k
// from a k that is a multiple of V. The input is channels-last with its channels per group,
// strides and offset multiples of V, so those V values are one kernel position's adjacent
// channels: one 16-byte load, or zeros outside the input. The row's decomposition (batch item,
// window corner) is done once per row (gather_row), not per load.
// Needs ParamBuf (ConvParams, then the kernel-position table), NR, IDIL and V.
#ifndef NXV_CONV_GATHER16_GLSL
#define NXV_CONV_GATHER16_GLSL

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Gather16Buf { uvec4 v[]; };

struct GatherRow {
  int off;         // input offset of the row's batch item (without input dilation, of its window's corner)
  int corner[NR];  // the window's corner in the dilated input, per axis
  bool ok;         // the row exists
};

GatherRow gather_row(ParamBuf P, uint gm, uint m) {
  GatherRow r;
  r.ok = gm < m;
  uint rest = min(gm, m - 1u);
  uint item = nxv_fastdiv(rest, P.p.pos_magic, P.p.pos_shift);
  rest -= item * P.p.positions;
  int off = int(item) * P.p.in_n;
  [[unroll]] for (int d = NR - 1; d >= 0; --d) {
    uint q = nxv_fastdiv(rest, P.p.out_magic[d], P.p.out_shift[d]);
    int x = int(rest - q * P.p.out_ext[d]) * P.p.stride[d] - P.p.pad_lo[d];
    rest = q;
    r.corner[d] = x;
#if !IDIL
    off += x * P.p.in_sp[d];
#endif
  }
  r.off = off;
  return r;
}

// What a k (a multiple of V) reads, the same for every row: its channel and kernel position's
// table row. Separate from gather16 so that a caller loading one k for several rows does it once.
struct GatherK {
  int c;
  int dq[NXV_CONV_TABLE_ROW(NR)];
};

GatherK gather_k(ParamBuf P, uint k) {
  const uint TR = NXV_CONV_TABLE_ROW(NR);
  GatherK g;
  uint q = nxv_fastdiv(k, P.p.ci_magic, P.p.ci_shift);
  g.c = int(k - q * P.p.ci);
  [[unroll]] for (uint d = 0u; d < TR; ++d) g.dq[d] = P.table[q * TR + d];
  return g;
}

// `live`: whether the caller wants this vector (else zeros); the load is the only branch, so
// that a caller's unrolled loop around this stays unrolled.
uvec4 gather16(uvec2 in_addr, ParamBuf P, GatherRow r, GatherK g, bool live) {
  bool ok = r.ok && live;
#if IDIL
  int off = r.off + g.c;
  [[unroll]] for (uint d = 0u; d < NR; ++d) {
    int x = r.corner[d] + g.dq[1u + d];
    uint xi = nxv_fastdiv(uint(max(x, 0)), P.p.idil_magic[d], P.p.idil_shift[d]);
    ok = ok && x >= 0 && x < P.p.in_ext[d] && xi * P.p.idil[d] == uint(x);
    off += int(xi) * P.p.in_sp[d];
  }
#else
  int off = r.off + g.dq[0] + g.c;
  [[unroll]] for (uint d = 0u; d < NR; ++d) ok = ok && uint(r.corner[d] + g.dq[1u + d]) < uint(P.p.in_ext[d]);
#endif
  uvec4 v = uvec4(0u);
  if (ok) v = Gather16Buf(in_addr).v[uint(off) / V];
  return v;
}

#endif
