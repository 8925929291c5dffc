// sqrt of a float, correctly rounded, in float and 32-bit integer arithmetic (no doubles: a
// fast GPU runs double conversions at a quarter of its float rate). x = mx 2^ex with mx of 24
// bits; N = mx 2^t (t = 23 or 24, ex - t even) puts sqrt(N) in [2^23, 2^24), and
// sqrt(x) = sqrt(N) 2^((ex - t) / 2). The integer q nearest sqrt(N) satisfies
// q^2 - q < N <= q^2 + q (no ties: N is an integer); near sqrt(N), N - q^2 fits in 32 bits,
// so the low 32 bits of N and q^2 give it exactly. A float estimate, one integer Newton step
// on that residual and a final unit step settle q.
#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt_f32)
float nxv_sqrt_f32(float x) {
  // Special cases from the bits: drivers that flush subnormals would take one for zero.
  uint bx = floatBitsToUint(x);
  if (bx - 1u >= 0x7F7FFFFFu) {  // one test for +-0, +Inf, NaN and the negatives
    if ((bx & 0x7FFFFFFFu) == 0u || bx <= 0x7FFFFFFFu || (bx & 0x7FFFFFFFu) > 0x7F800000u) return x;
    return uintBitsToFloat(0x7FC00000u);
  }
  uint mx;
  int ex;
  if ((bx >> 23) == 0u) {  // subnormal: normalise from the bits (drivers may flush them)
    int shift = 23 - findMSB(bx);
    mx = bx << uint(shift);
    ex = -149 - shift;
  } else {
    mx = (bx & 0x7FFFFFu) | 0x800000u;
    ex = int(bx >> 23) - 150;
  }
  int t = 24 - (ex & 1);
  uint n_lo = mx << uint(t);
  float nf = float(mx) * float(1u << uint(t));  // exact: 24 significant bits
  float y = inversesqrt(nf);                    // ~1 / sqrt(N), a few ulps
  uint q = uint(nf * y + 0.5);
  int d = int(n_lo - q * q);                    // N - q^2, exact
  q = uint(int(q) + int(floor(float(d) * 0.5 * y + 0.5)));
  d = int(n_lo - q * q);
  if (d > int(q)) q += 1u;
  else if (d <= -int(q)) q -= 1u;
  return float(q) * uintBitsToFloat(uint((ex - t) / 2 + 127) << 23);
}
#endif
