// sqrt, rsqrt and cbrt for float results (f32, and f16/bf16/f8 after it), with doubles only
// where float precision runs out. The double versions in nxv_real.glsl make their
// results correctly rounded in double by exact residuals, several times the memory time per
// element on a fast GPU; a float result needs much less. No double division or square root
// but for subnormal inputs: drivers build them from many double instructions.
// - sqrt: x inversesqrt(x) and a Newton step in double, then the exact test: r has 24 bits and
//   the midpoints next to it 25, so their squares are exact in double and compared with x
//   decide the correctly rounded result (no midpoint is a square root of a float: no ties).
// - rsqrt: the driver's inversesqrt (a few ulps), one Newton step in double (error 1.5 e^2),
//   rounded once: within 1 ulp of Nx's double 1 / sqrt(x) rounded.
// - cbrt: m^(-1/3) by Newton steps in float (no division), then a last Newton step on
//   y^3 = m with its residual in double (relative error ~2^-39), rounded once; exact cubes
//   come out exact.

const double NXV_F32_MIN_NORMAL = 1.17549435082228750797e-38LF;

// The ulp of a normal float r, and the ulp below it (half as large at a power of two).
#if !NXV_SELECT || defined(NXV_USE_nxv_f32_ulps)
void nxv_f32_ulps(float r, out double u, out double ud) {
  float p2 = uintBitsToFloat(floatBitsToUint(r) & 0x7F800000u);  // 2^floor(log2 r)
  u = double(p2) * 1.1920928955078125e-07LF;                       // 2^-23
  ud = r == p2 ? 0.5LF * u : u;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt_to_f32)
float nxv_sqrt_to_f32(double x) {
  if (!(x > 0.0LF) || isinf(x)) return float(x == 0.0LF ? x : (x < 0.0LF ? nxv_nan(x) : x));
  double s;
  if (x < NXV_F32_MIN_NORMAL) {
    s = sqrt(x);  // subnormal inputs: drivers may flush them in float arithmetic
  } else {
    double y = double(inversesqrt(float(x)));  // a few ulps
    s = x * y;
    s = s + 0.5LF * y * (x - s * s);  // Newton: relative error ~1e-13
  }
  float r = float(s);
  double u, ud;  // the exact test settles the last ulp
  nxv_f32_ulps(r, u, ud);
  double up = double(r) + 0.5LF * u, dn = double(r) - 0.5LF * ud;
  if (up * up < x) r = float(double(r) + u);
  else if (dn * dn > x) r = float(double(r) - ud);
  return r;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_rsqrt_to_f32)
float nxv_rsqrt_to_f32(double x) {
  if (!(x > 0.0LF) || isinf(x)) return float(1.0LF / double(nxv_sqrt_to_f32(x)));  // +-0, <0, NaN, Inf
  double y = x < NXV_F32_MIN_NORMAL ? 1.0LF / sqrt(x) : double(inversesqrt(float(x)));
  y = y * (1.5LF - 0.5LF * x * y * y);
  return float(y);
}
#endif

// m^(-1/3) for m in [0.5, 4) to 2^-20.5: a cubic estimate (1.7%) and two Newton steps in float,
// without division. Enough: the last Newton step on y^3 = m (its residual in double) squares
// the error of y = m z^2, to ~2^-39.
#if !NXV_SELECT || defined(NXV_USE_nxv_cbrt_recip_f32)
float nxv_cbrt_recip_f32(float m) {
  float z = 1.5585008138358607 + m * (-0.7488559329542039 + m * (0.23127385229413464 - 0.025689419542809788 * m));
  for (int i = 0; i < 2; ++i) z = z * (4.0 - m * z * z * z) * (1.0 / 3.0);
  return z;
}
#endif

// m^(1/3) for a double m in [0.5, 4), to ~2^-39 relative (1 / (3 y^2) = z^2 / 3).
#if !NXV_SELECT || defined(NXV_USE_nxv_cbrt_reduced)
double nxv_cbrt_reduced(double m) {
  float mf = float(m);  // an estimate is enough here; m itself enters the residual
  float z = nxv_cbrt_recip_f32(mf);
  double y = double(mf * z * z);
  return y + (m - y * y * y) * double(z * z * (1.0 / 3.0));
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cbrt_to_f32)
float nxv_cbrt_to_f32(double x) {
  if (isnan(x) || isinf(x) || x == 0.0LF) return float(x);
  // |x| = m 2^e with m in [0.5, 1), from the bits (x is a normal double here).
  uvec2 w = unpackDouble2x32(abs(x));
  int t = int((w.y >> 20) & 0x7FFu) - 1022 + 300;  // e + 300 > 0
  int q = (t * 21846) >> 16;                       // t / 3 for 0 <= t < 32768, no integer division
  int r3 = t - 3 * q;
  q -= 100;
  double m = packDouble2x32(uvec2(w.x, (w.y & 0x000FFFFFu) | (uint(1022 + r3) << 20)));  // [0.5, 4)
  float r = float(nxv_cbrt_reduced(m) * packDouble2x32(uvec2(0u, uint(q + 1023) << 20)));
  return x < 0.0LF ? -r : r;
}
#endif

// cbrt of a float argument: the same reduction with the exponent split from the float's bits
// and doubles only in the last Newton step (fewer conversions, which a fast GPU runs at a
// quarter of its float rate).
#if !NXV_SELECT || defined(NXV_USE_nxv_cbrt_f32)
float nxv_cbrt_f32(float x) {
  uint bx = floatBitsToUint(x);
  uint ax = bx & 0x7FFFFFFFu;
  if (ax == 0u || ax >= 0x7F800000u) return x;  // +-0, +-Inf, NaN
  // |x| = f 2^e with f in [0.5, 1), subnormals normalised from the bits.
  uint frac;
  int e;
  if (ax < 0x800000u) {
    int shift = 23 - findMSB(ax);
    frac = (ax << uint(shift)) & 0x7FFFFFu;
    e = -125 - shift;
  } else {
    frac = ax & 0x7FFFFFu;
    e = int(ax >> 23) - 126;
  }
  int t = e + 300;                  // > 0
  int q = (t * 21846) >> 16;        // t / 3 for 0 <= t < 32768
  int r3 = t - 3 * q;
  q -= 100;
  float mf = uintBitsToFloat(frac | (uint(126 + r3) << 23));  // f 2^r3 in [0.5, 4), exact
  // The last Newton step with only the residual in double: y + d z^2 / 3 is rounded once, in
  // float, and d = m - y^3 (exact to 2^-53) is 0 for an exact cube root.
  float z = nxv_cbrt_recip_f32(mf);
  float y = mf * z * z;
  double dy = double(y);
  float d = float(double(mf) - dy * dy * dy);
  float r = (y + d * (z * z * (1.0 / 3.0))) * uintBitsToFloat(uint(q + 127) << 23);  // exact: a normal result
  return (bx >> 31) != 0u ? -r : r;
}
#endif
