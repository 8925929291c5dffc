// Float asin and acos without division or atan: for |x| <= 1/2, asin x = x + x z P(z) with
// z = x^2; above, asin |x| = pi/2 - 2 asin(s) with s = sqrt(z), z = (1 - |x|) / 2 (exact); acos
// from the same asin. One polynomial per element either way, its argument picked per element
// (a GPU runs both sides of a per-element choice). P is the minimax polynomial of Cephes'
// asinf (relative error 2.5e-7 before rounding).
const float NXV_PIO2_HI_F = 1.57079637050628662109;   // float(pi / 2)
const float NXV_PIO2_LO_F = -4.37113900018624283e-8;  // pi / 2 - NXV_PIO2_HI_F

// sqrt z for 0 <= z <= 1/4 within ~1 ulp (the driver's inverse square root and one Newton
// step; the correctly rounded nxv_sqrt_f32 costs as much as the rest of asin).
#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt_quarter)
float nxv_sqrt_quarter(float z) {
  float y = inversesqrt(max(z, 1e-30));
  float s = z * y;
  return s + 0.5 * y * (z - s * s);
}
#endif

// asin s for 0 <= s <= 1/2, z = s^2.
#if !NXV_SELECT || defined(NXV_USE_nxv_asin_small)
float nxv_asin_small(float s, float z) {
  float p = 4.2163199048e-2;
  p = p * z + 2.4181311049e-2;
  p = p * z + 4.5470025998e-2;
  p = p * z + 7.4953002686e-2;
  p = p * z + 1.6666752422e-1;
  return s + s * z * p;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_asin)
float nxv_asin(float x) {
  if (isnan(x) || abs(x) > 1.0) return nxv_nan(x);
  if (x == 0.0) return x;  // keeps -0.0
  float ax = abs(x);
  bool big = ax > 0.5;
  float z = big ? 0.5 * (1.0 - ax) : ax * ax;
  float p = nxv_asin_small(big ? nxv_sqrt_quarter(z) : ax, z);
  float r = big ? NXV_PIO2_HI_F - (2.0 * p - NXV_PIO2_LO_F) : p;
  return x < 0.0 ? -r : r;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_acos)
float nxv_acos(float x) {
  if (isnan(x) || abs(x) > 1.0) return nxv_nan(x);
  float ax = abs(x);
  bool big = ax > 0.5;
  float z = big ? 0.5 * (1.0 - ax) : ax * ax;
  float p = nxv_asin_small(big ? nxv_sqrt_quarter(z) : ax, z);
  if (!big) return NXV_PIO2_HI_F - ((x < 0.0 ? -p : p) - NXV_PIO2_LO_F);  // pi/2 - asin x
  if (x > 0.0) return 2.0 * p;
  return 2.0 * NXV_PIO2_HI_F - (2.0 * p - 2.0 * NXV_PIO2_LO_F);  // pi - 2 asin s
}
#endif
