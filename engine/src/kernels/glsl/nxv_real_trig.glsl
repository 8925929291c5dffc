// sin, cos and tan on one float type, included by nxv_math.glsl right after nxv_real.glsl with
// the same T, K and NXV_* definitions. x = k pi/2 + r with a three-part pi/2 (NXV_PIO2_1..3),
// kernels on |r| <= pi/4; huge arguments, and floats too close to a multiple of pi/2 for the
// three parts, take an exact reduction (Payne-Hanek).
//
// Each op also has a fast form, nxv_<op>_fast(x, exact): the same arithmetic without the exact
// reduction, setting `exact` where an element needs it. NaN and infinities, which the reduction
// finds out of range, are left to the full op too, so the fast form has no early return. The
// elementwise kernel runs the fast form in its loops and the full op at one call site for the
// elements of an invocation that set the flag (elementwise.comp, OP_FAST): the exact reduction
// is long, and inlined into every element's code it made compiling a sin kernel several times
// slower, in shaderc and in the driver alike.
#if !NXV_SELECT || defined(NXV_USE_nxv_sin_kernel)
T nxv_sin_kernel(T r) {
  T z = r * r;
#if NXV_MANT > 24
  T p = K(-1.0LF) / K(121645100408832000.0LF);
  p = p * z + K(1.0LF) / K(355687428096000.0LF);
  p = p * z - K(1.0LF) / K(1307674368000.0LF);
  p = p * z + K(1.0LF) / K(6227020800.0LF);
  p = p * z - K(1.0LF) / K(39916800.0LF);
#else  // float: terms to r^11 / 11! (the next is below 2^-36 of r)
  T p = K(-1.0LF) / K(39916800.0LF);
#endif
  p = p * z + K(1.0LF) / K(362880.0LF);
  p = p * z - K(1.0LF) / K(5040.0LF);
  p = p * z + K(1.0LF) / K(120.0LF);
  p = p * z - K(1.0LF) / K(6.0LF);
  return r + r * z * p;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos_kernel)
T nxv_cos_kernel(T r) {
  T z = r * r;
#if NXV_MANT > 24
  T p = K(-1.0LF) / K(6402373705728000.0LF);
  p = p * z + K(1.0LF) / K(20922789888000.0LF);
  p = p * z - K(1.0LF) / K(87178291200.0LF);
  p = p * z + K(1.0LF) / K(479001600.0LF);
#else  // float: terms to r^12 / 12! (the next is below 2^-39)
  T p = K(1.0LF) / K(479001600.0LF);
#endif
  p = p * z - K(1.0LF) / K(3628800.0LF);
  p = p * z + K(1.0LF) / K(40320.0LF);
  p = p * z - K(1.0LF) / K(720.0LF);
  p = p * z + K(1.0LF) / K(24.0LF);
  T hz = K(0.5LF) * z;
  T w = K(1.0LF) - hz;
  return w + (((K(1.0LF) - w) - hz) + z * z * p);
}
#endif

// Payne-Hanek: |x| = m 2^e (integer m); multiply m by a 256-bit window of 2/pi's bits. In
// straight-line integer code (no loop, no indexed local array), which drivers compile several
// times faster than a loop over limbs in a local array.
#ifndef NXV_LIMBS
#define NXV_LIMBS
// One limb of a one-word by many-word product: the low word of m w + c, its high word carried in c.
#if !NXV_SELECT || defined(NXV_USE_nxv_mul_limb)
uint nxv_mul_limb(uint m, uint w, inout uint c) {
  uint hi, lo, cc;
  umulExtended(m, w, hi, lo);
  lo = uaddCarry(lo, c, cc);
  c = hi + cc;  // hi <= 2^32 - 2: no overflow
  return lo;
}
#endif

// a + b + c for a carry c in {0, 1}, the carry out in c.
#if !NXV_SELECT || defined(NXV_USE_nxv_add_limb)
uint nxv_add_limb(uint a, uint b, inout uint c) {
  uint c1, c2;
  uint s = uaddCarry(a, b, c1);
  s = uaddCarry(s, c, c2);
  c = c1 + c2;  // at most 1: after a carry out of a + b, s <= 2^32 - 2
  return s;
}
#endif

// (a, b, c, d)[i] for i in [0, 3], by selects.
#if !NXV_SELECT || defined(NXV_USE_nxv_pick4)
uint nxv_pick4(int i, uint a, uint b, uint c, uint d) { return mix(mix(a, b, i >= 1), mix(c, d, i >= 3), i >= 2); }
#endif

// 32 bits from bit o (0 to 31) of the 64-bit lo + hi 2^32 (two shifts: hi << 32 is undefined).
#if !NXV_SELECT || defined(NXV_USE_nxv_bits_of)
uint nxv_bits_of(uint lo, uint hi, uint o) { return (lo >> o) | ((hi << 1u) << (31u - o)); }
#endif
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_rem_pio2_large)
int nxv_rem_pio2_large(T x, out T r) {
  uint m0, m1;
  int e;
  nxv_mantissa(abs(x), m0, m1, e);
  int j0 = e < 2 ? 0 : (e - 2) / 32;
  // The window w[i] = NXV_TWO_OVER_PI[j0 + i]. A float needs the first 11 words only (j0 <= 3),
  // picked by selects: drivers compile an indexed constant array into far longer code.
  uint w[8];
#if NXV_MANT == 24
  w[0] = nxv_pick4(j0, NXV_TWO_OVER_PI[0], NXV_TWO_OVER_PI[1], NXV_TWO_OVER_PI[2], NXV_TWO_OVER_PI[3]);
  w[1] = nxv_pick4(j0, NXV_TWO_OVER_PI[1], NXV_TWO_OVER_PI[2], NXV_TWO_OVER_PI[3], NXV_TWO_OVER_PI[4]);
  w[2] = nxv_pick4(j0, NXV_TWO_OVER_PI[2], NXV_TWO_OVER_PI[3], NXV_TWO_OVER_PI[4], NXV_TWO_OVER_PI[5]);
  w[3] = nxv_pick4(j0, NXV_TWO_OVER_PI[3], NXV_TWO_OVER_PI[4], NXV_TWO_OVER_PI[5], NXV_TWO_OVER_PI[6]);
  w[4] = nxv_pick4(j0, NXV_TWO_OVER_PI[4], NXV_TWO_OVER_PI[5], NXV_TWO_OVER_PI[6], NXV_TWO_OVER_PI[7]);
  w[5] = nxv_pick4(j0, NXV_TWO_OVER_PI[5], NXV_TWO_OVER_PI[6], NXV_TWO_OVER_PI[7], NXV_TWO_OVER_PI[8]);
  w[6] = nxv_pick4(j0, NXV_TWO_OVER_PI[6], NXV_TWO_OVER_PI[7], NXV_TWO_OVER_PI[8], NXV_TWO_OVER_PI[9]);
  w[7] = nxv_pick4(j0, NXV_TWO_OVER_PI[7], NXV_TWO_OVER_PI[8], NXV_TWO_OVER_PI[9], NXV_TWO_OVER_PI[10]);
#else
  uint tab[40] = NXV_TWO_OVER_PI;  // one local copy: each indexing of the constant would copy it
  for (int i = 0; i < 8; ++i) w[i] = tab[j0 + i];
#endif
  // P = (m1 2^32 + m0) V, V = sum w[i] 2^(32 (7-i)): limbs p0 (lowest) to p9.
  uint c = 0u;
  uint p0 = nxv_mul_limb(m0, w[7], c);
  uint p1 = nxv_mul_limb(m0, w[6], c);
  uint p2 = nxv_mul_limb(m0, w[5], c);
  uint p3 = nxv_mul_limb(m0, w[4], c);
  uint p4 = nxv_mul_limb(m0, w[3], c);
  uint p5 = nxv_mul_limb(m0, w[2], c);
  uint p6 = nxv_mul_limb(m0, w[1], c);
  uint p7 = nxv_mul_limb(m0, w[0], c);
  uint p8 = c, p9 = 0u;
#if NXV_MANT > 24  // float mantissas have no m1
  c = 0u;
  uint d = 0u;  // the carry of the sum
  p1 = nxv_add_limb(p1, nxv_mul_limb(m1, w[7], c), d);
  p2 = nxv_add_limb(p2, nxv_mul_limb(m1, w[6], c), d);
  p3 = nxv_add_limb(p3, nxv_mul_limb(m1, w[5], c), d);
  p4 = nxv_add_limb(p4, nxv_mul_limb(m1, w[4], c), d);
  p5 = nxv_add_limb(p5, nxv_mul_limb(m1, w[3], c), d);
  p6 = nxv_add_limb(p6, nxv_mul_limb(m1, w[2], c), d);
  p7 = nxv_add_limb(p7, nxv_mul_limb(m1, w[1], c), d);
  p8 = nxv_add_limb(p8, nxv_mul_limb(m1, w[0], c), d);
  p9 = c + d;  // P < 2^320: no carry out
#endif
  // The binary point sits at bit sb = 32 (j0 + 8) - e of P, in limb sb / 32 = 6 + l, l in [0, 3]
  // (sb from 223 to 290: e >= 2 gives 254 - (e - 2) mod 32; smaller e come from |x| >= pi/4,
  // doubles from |x| >= 2^18). The quadrant and four words of fraction below it lie in limbs
  // 2 + l to 7 + l; a limb above p9 only reaches bits of the quadrant word that are masked off.
  int sb = 32 * (j0 + 8) - e;
  int l = (sb >> 5) - 6;
  uint o = uint(sb & 31);
  uint v0 = nxv_pick4(l, p2, p3, p4, p5), v1 = nxv_pick4(l, p3, p4, p5, p6), v2 = nxv_pick4(l, p4, p5, p6, p7),
       v3 = nxv_pick4(l, p5, p6, p7, p8), v4 = nxv_pick4(l, p6, p7, p8, p9), v5 = nxv_pick4(l, p7, p8, p9, 0u);
  uint q = nxv_bits_of(v4, v5, o) & 3u;
  uint f3 = nxv_bits_of(v3, v4, o), f2 = nxv_bits_of(v2, v3, o), f1 = nxv_bits_of(v1, v2, o),
       f0 = nxv_bits_of(v0, v1, o);
  bool neg = (f3 >> 31) != 0u;
  if (neg) {  // fraction >= 1/2: take fraction - 1 (two's complement) and the next quadrant
    q = (q + 1u) & 3u;
    uint c = 0u;
    f0 = uaddCarry(~f0, 1u, c);
    f1 = uaddCarry(~f1, c, c);
    f2 = uaddCarry(~f2, c, c);
    f3 = ~f3 + c;
  }
  // The fraction: each word scaled by its power of two, every product exact (f0's in float
  // subnormal, and far below f3's rounding).
  T s32 = nxv_pow2(K(1.0LF), -32), s64 = s32 * s32;
  T f = T(f3) * s32 + T(f2) * s64 + T(f1) * (s64 * s32) + (T(f0) * s64) * s64;
  T rr = f * K(1.57079632679489655800LF) + f * K(6.12323399573676603587e-17LF);
  if (neg) rr = -rr;
  if (x < K(0.0LF)) {
    rr = -rr;
    q = (4u - q) & 3u;
  }
  r = rr;
  return int(q);
}
#endif

// Returns the quadrant and sets r with x = k pi/2 + r, or sets `exact` where x needs the exact
// reduction (r and the quadrant are then meaningless).
#if !NXV_SELECT || defined(NXV_USE_nxv_rem_pio2_fast)
int nxv_rem_pio2_fast(T x, out T r, inout bool exact) {
  T k = floor(x * K(0.63661977236758134308LF) + K(0.5LF));
  r = ((x - k * NXV_PIO2_1) - k * NXV_PIO2_2) - k * NXV_PIO2_3;
  bool near = abs(x) < NXV_RED_MAX;
#if NXV_MANT == 24
  // Float: the three parts leave r off by up to |k| 2^-47.8, and some floats below 8192 lie
  // within 2^-27.8 of a multiple of pi/2 (252.898208: r = 4.2e-9). Where |r| < |k| 2^-21 (r no
  // longer within 2^-26.8 relative) the exact reduction takes over: rare, and never for
  // |x| < pi/4 (k = 0).
  bool accurate = !(abs(r) < abs(k) * K(4.76837158203125e-7LF));
  near = near && accurate;
#endif
  exact = exact || !near;
  return int(k) & 3;  // |k| < 2^20 where it counts; two's complement keeps the quadrant of negative k
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_rem_pio2)
int nxv_rem_pio2(T x, out T r) {
  bool exact = false;
  int q = nxv_rem_pio2_fast(x, r, exact);
  if (exact) q = nxv_rem_pio2_large(x, r);
  return q;
}
#endif

#if NXV_MANT == 24
// Float sin and cos: one polynomial chain per element, its five coefficients picked from the sine
// or the cosine series by quadrant (a GPU runs both sides of a per-element choice, and these
// ops are bound by instructions issued: ~65 per element at copy speed on an H200), and no
// separate small-argument path (k = 0 leaves r = x exactly).
// sin r = r + (r z) S(z); cos r = w + (((1 - w) - z/2) + z^2 C(z)), w = 1 - z/2: both hi + (lo + b p).
#if !NXV_SELECT || defined(NXV_USE_nxv_sincos_f32)
float nxv_sincos_f32(float r, bool cosine) {
  float z = r * r;
  float p = cosine ? 1.0 / 479001600.0 : -1.0 / 39916800.0;
  p = p * z + (cosine ? -1.0 / 3628800.0 : 1.0 / 362880.0);
  p = p * z + (cosine ? 1.0 / 40320.0 : -1.0 / 5040.0);
  p = p * z + (cosine ? -1.0 / 720.0 : 1.0 / 120.0);
  p = p * z + (cosine ? 1.0 / 24.0 : -1.0 / 6.0);
  float hz = 0.5 * z;
  float w = 1.0 - hz;
  float hi = cosine ? w : r;
  float lo = cosine ? (1.0 - w) - hz : 0.0;
  return hi + (lo + (cosine ? z * z : r * z) * p);
}
#endif

// sin x and cos x from x = k pi/2 + r, q = k mod 4.
#if !NXV_SELECT || defined(NXV_USE_nxv_sin_reduced)
float nxv_sin_reduced(float r, int q) {
  float v = nxv_sincos_f32(r, (q & 1) != 0);
  return (q & 2) == 0 ? v : -v;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos_reduced)
float nxv_cos_reduced(float r, int q) {
  float v = nxv_sincos_f32(r, (q & 1) == 0);
  return (q == 1 || q == 2) ? -v : v;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sin)
float nxv_sin(float x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  if (x == 0.0) return x;
  float r;
  int q = nxv_rem_pio2(x, r);
  return nxv_sin_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sin_fast)
float nxv_sin_fast(float x, inout bool exact) {
  float r;
  int q = nxv_rem_pio2_fast(x, r, exact);
  float v = nxv_sin_reduced(r, q);
  return x == 0.0 ? x : v;  // -0.0
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos)
float nxv_cos(float x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  float r;
  int q = nxv_rem_pio2(x, r);
  return nxv_cos_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos_fast)
float nxv_cos_fast(float x, inout bool exact) {
  float r;
  int q = nxv_rem_pio2_fast(x, r, exact);
  return nxv_cos_reduced(r, q);
}
#endif
#else
#if !NXV_SELECT || defined(NXV_USE_nxv_sin_reduced)
T nxv_sin_reduced(T r, int q) {
  T v = (q & 1) == 0 ? nxv_sin_kernel(r) : nxv_cos_kernel(r);
  return (q & 2) == 0 ? v : -v;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos_reduced)
T nxv_cos_reduced(T r, int q) {
  T v = (q & 1) == 0 ? nxv_cos_kernel(r) : nxv_sin_kernel(r);
  return (q == 1 || q == 2) ? -v : v;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sin)
T nxv_sin(T x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  if (abs(x) < K(0.7853981633974483LF)) return x == K(0.0LF) ? x : nxv_sin_kernel(x);
  T r;
  int q = nxv_rem_pio2(x, r);
  return nxv_sin_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sin_fast)
T nxv_sin_fast(T x, inout bool exact) {
  if (abs(x) < K(0.7853981633974483LF)) return x == K(0.0LF) ? x : nxv_sin_kernel(x);
  T r;
  int q = nxv_rem_pio2_fast(x, r, exact);
  return nxv_sin_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos)
T nxv_cos(T x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  if (abs(x) < K(0.7853981633974483LF)) return nxv_cos_kernel(x);
  T r;
  int q = nxv_rem_pio2(x, r);
  return nxv_cos_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cos_fast)
T nxv_cos_fast(T x, inout bool exact) {
  if (abs(x) < K(0.7853981633974483LF)) return nxv_cos_kernel(x);
  T r;
  int q = nxv_rem_pio2_fast(x, r, exact);
  return nxv_cos_reduced(r, q);
}
#endif
#endif

#if NXV_MANT == 24
// Float tan in one polynomial: tan r = r + r^3 P(r^2) on |r| <= pi/4 (relative error 2^-25.8),
// and -1 / tan r in odd quadrants with one correction step that also takes in the rounding of
// r + r^3 P (drivers' division may be 2.5 ulp off). In place of both the sine and the cosine
// series and a corrected division: 0.78-0.83 -> 0.88-0.91 of copy bandwidth on an H200.
// Worst error 3 ulp measured (huge arguments, through the reduction's own rounding).
#if !NXV_SELECT || defined(NXV_USE_nxv_tan_reduced)
float nxv_tan_reduced(float r, int q) {
  float z = r * r;
  float p = 0.009385565894686705;
  p = p * z + 0.0031196330124535245;
  p = p * z + 0.024430326492949087;
  p = p * z + 0.05341122244848151;
  p = p * z + 0.13338800210241938;
  p = p * z + 0.33333156816706655;
  precise float lo = (r * z) * p;
  precise float t = r + lo;
  if ((q & 1) == 0) return t;
  float rd = 1.0 / t;
  precise float e = (1.0 - t * rd) - (lo - (t - r)) * rd;  // 1 - (r + lo) rd
  return -(rd + rd * e);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_tan)
float nxv_tan(float x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  float r;
  int q = nxv_rem_pio2(x, r);  // k = 0 leaves r = x, -0.0 included
  return nxv_tan_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_tan_fast)
float nxv_tan_fast(float x, inout bool exact) {
  float r;
  int q = nxv_rem_pio2_fast(x, r, exact);
  return nxv_tan_reduced(r, q);
}
#endif
#else
#if !NXV_SELECT || defined(NXV_USE_nxv_tan_reduced)
T nxv_tan_reduced(T r, int q) {
  T s = nxv_sin_kernel(r), c = nxv_cos_kernel(r);
  T num = (q & 1) == 0 ? s : -c, den = (q & 1) == 0 ? c : s;
  // The quotient with one correction step: drivers' division may be 2.5 ulp off (NVIDIA's is).
  T rd = K(1.0LF) / den, t = num * rd;
  if (isinf(t) || t == K(0.0LF)) return t;
  return t + (num - t * den) * rd;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_tan)
T nxv_tan(T x) {
  if (isnan(x) || isinf(x)) return nxv_nan(x);
  if (x == K(0.0LF)) return x;
  T r;
  int q = abs(x) < K(0.7853981633974483LF) ? 0 : nxv_rem_pio2(x, r);
  if (abs(x) < K(0.7853981633974483LF)) r = x;
  return nxv_tan_reduced(r, q);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_tan_fast)
T nxv_tan_fast(T x, inout bool exact) {
  if (x == K(0.0LF)) return x;
  T r;
  int q = abs(x) < K(0.7853981633974483LF) ? 0 : nxv_rem_pio2_fast(x, r, exact);
  if (abs(x) < K(0.7853981633974483LF)) r = x;
  return nxv_tan_reduced(r, q);
}
#endif
#endif
