// Float atanh in one reduction and one short polynomial, without log1p's three divisions:
// (1 + a) / (1 - a) = 2^k m with m in [1, 2), so atanh a = k ln2 / 2 + atanh s with
// s = (m - 1) / (m + 1) = ((1 + a) - 2^k (1 - a)) / ((1 + a) + 2^k (1 - a)) in [0, 1/3].
// Both terms of the result are positive, so nothing cancels; for a < 1/3 (k = 0) s is a itself.
// Worst error 1.5 ulp on a float model of this code (the division's own error comes on top).
// atanh s = s + s^3 P(s^2) for s in [0, 1/3], P fitted (relative error below 2^-27): the end of
// float atanh and asinh (nxv_asinh_f32.glsl).
#if !NXV_SELECT || defined(NXV_USE_nxv_atanh_series_f32)
float nxv_atanh_series_f32(float s) {
  float s2 = s * s;
  float p = 0.12130271839820073;
  p = p * s2 + 0.10720645648325965;
  p = p * s2 + 0.14307704805491708;
  p = p * s2 + 0.19999468528342002;
  p = p * s2 + 0.33333337463411533;
  return s + s * s2 * p;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_atanh)
float nxv_atanh(float x) {
  float a = abs(x);
  float n = 1.0 + a, d = 1.0 - a;  // d is exact for a >= 1/2
  int k = int(floatBitsToUint(n / d) >> 23) - 127;
  float p2k = uintBitsToFloat(uint(k + 127) << 23);
  // (1 + a) - 2^k (1 - a) rounded once: a 2^k - (2^k - 1) is exact for a < 1/2 (k <= 1),
  // 1 - 2^k d for a >= 1/2 (k >= 1, d exact).
  float t = a < 0.5 ? a * p2k - (p2k - 1.0) : 1.0 - p2k * d;
  float s = (t + a) / (n + p2k * d);
  float r = nxv_atanh_series_f32(s);
  float kf = float(k);
  r = kf * (0.5 * NXV_LN2F_HI) + (kf * (0.5 * NXV_LN2F_LO) + r);  // k * hi is exact
  r = a < 1.0 ? r : (a == 1.0 ? 1.0 / 0.0 : nxv_nan(x));           // NaN x takes the last
  return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));  // -0.0 too
}
#endif
