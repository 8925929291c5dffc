// sinh and tanh for single precision (included by nxv_real.glsl when T is float). The generic
// versions go through nxv_expm1 and nxv_exp, with per-element branches (small arguments,
// overflow, the scale's range): on an H200 they ran at 0.82-0.90 of copy bandwidth. Here one reduction
// e^a = 2^k (1 + p), k from the 1.5 * 2^23 shift (no conversion instructions, which a fast GPU
// issues at a quarter rate) and the special operands by selects at the end: 0.94-0.98.
// Worst errors measured: 2 ulp each, as the generic versions.

// e^a - 1 = 2^k (1 + p) - 1 for 0 <= a <= 89.5: sets k's bits (k << 23, k in [0, 129]) and p.
#if !NXV_SELECT || defined(NXV_USE_nxv_expm1_parts_f32)
float nxv_expm1_parts_f32(float a, out uint kbits) {
  precise float kt = a * 1.44269504 + 12582912.0;  // k in the low bits
  float k = kt - 12582912.0;
  kbits = floatBitsToUint(kt) << 23;
  return nxv_expm1f_reduced((a - k * NXV_LN2F_HI) - k * NXV_LN2F_LO);
}
#endif

// tanh |x| = t / (t + 2), t = e^(2|x|) - 1; it rounds to 1 from 9.01 on.
#if !NXV_SELECT || defined(NXV_USE_nxv_tanh)
float nxv_tanh(float x) {
  float a = min(abs(x), 9.5);
  uint kbits;
  float p = nxv_expm1_parts_f32(a + a, kbits);
  float s = uintBitsToFloat(kbits + (127u << 23));  // 2^k, k <= 14
  float t = s * p + (s - 1.0);                     // s - 1 exact
  float r = t / (t + 2.0);
  r = uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));  // tanh(-0) = -0
  return isnan(x) ? x : r;
}
#endif

// sinh a = h + h / (2h + 1) with h = (e^a - 1) / 2 = 2^(k-1) (1 + p) - 1/2 (the second term is
// (1 - e^-a) / 2), so that small arguments keep their relative accuracy. 2^(k-1) overflows for
// k = 129 (a > 89.07, sinh still finite to 89.416): there h is built with the scale in two
// factors, and large k loses nothing by rounding 1 + p first.
#if !NXV_SELECT || defined(NXV_USE_nxv_sinh)
float nxv_sinh(float x) {
  float ax = abs(x);
  uint kbits;
  float p = nxv_expm1_parts_f32(min(ax, 89.5), kbits);  // sinh(89.5) overflows, as inf does
  float sh = uintBitsToFloat(kbits + (126u << 23));   // 2^(k-1)
  float h_small = sh * p + (sh - 0.5);
  float h_big = ((1.0 + p) * uintBitsToFloat(kbits + (62u << 23))) * 18446744073709551616.0 - 0.5;
  float h = kbits < (20u << 23) ? h_small : h_big;
  float q = h / (h + h + 1.0);
  float r = isinf(h) ? h : h + q;
  r = uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));
  // Below 2^-12, sinh x = x + x^3/6 rounds to x (subnormals and -0.0 kept); NaN passes through.
  return (ax < 0.000244140625 || isnan(x)) ? x : r;
}
#endif
