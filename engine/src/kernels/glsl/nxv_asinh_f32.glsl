// Float asinh in one reduction and atanh's polynomial (nxv_atanh_f32.glsl), without log1p's
// three divisions: w = a + sqrt(a^2 + 1) = 2^k m with m in [1, 2), and
//   asinh a = log w = k ln2 + 2 atanh s,  s = (m - 1) / (m + 1) = (w - 2^k) / (w + 2^k) in [0, 1/3].
// For k = 0 (a < 3/4), s = a / (1 + h) (= tanh(asinh(a) / 2)) has no cancellation, and the
// quotient's correction step takes in the rounding of 1 + h; h itself takes a Newton step from
// inversesqrt. For k >= 1 the result is at least ln 2, so an absolute error in s matters less.
// Worst error 3.2 ulp on a float model of this code with the driver's division 2.5 ulp and
// inversesqrt 2 ulp off (2.3 with both exact; compensating a + h and w + 2^k too would give
// 2.3 ulp but cost 10% of the speed on an H200).
#if !NXV_SELECT || defined(NXV_USE_nxv_asinh)
float nxv_asinh(float x) {
  float a = abs(x);
  float q = a * a + 1.0;
  float y = inversesqrt(q);
  float h0 = q * y;
  float h = h0 + (0.5 * y) * (q - h0 * h0);  // sqrt(q) within ~1 ulp
  // Above 2^12, asinh a = log 2a within 2^-26 relative: w = a / 16, five more powers of two
  // below (1 / (w + 2^k) stays a normal float: NVIDIA flushes subnormal reciprocals).
  bool big = a > 4096.0;
  float w = big ? 0.0625 * a : a + h;
  int k = int(floatBitsToUint(w) >> 23) - 127;
  float p2k = uintBitsToFloat(uint(k + 127) << 23);
  bool k0 = k == 0;
  float num = k0 ? a : w - p2k;  // exact (Sterbenz)
  float den = k0 ? 1.0 + h : w + p2k;
  precise float dlo = k0 ? (1.0 - den) + h : 0.0;
  float rd = 1.0 / den;
  float s0 = num * rd;
  float s = s0 + ((num - s0 * den) - s0 * dlo) * rd;
  float at = nxv_atanh_series_f32(s);
  float kf = float(k + (big ? 5 : 0));
  float r = kf * NXV_LN2F_HI + (kf * NXV_LN2F_LO + 2.0 * at);  // k * hi is exact
  // asinh a = a - a^3/6: a itself below 2^-12 (subnormals kept); Inf and NaN pass through.
  r = (a < 0.000244140625 || !(a < 1.0 / 0.0)) ? a : r;
  return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));
}
#endif
