// Scalar helpers shared by kernels. Nx semantics where GLSL's differ.
// Guarded by the NXV_* switches so that a kernel declares only the capabilities it uses.
// With NXV_SELECT set, only the definitions a kernel uses are compiled: each function (every
// overload of a name, in every file of the library), and the larger constants, sit under
//   #if !NXV_SELECT || defined(NXV_USE_<name>)
// and the host (kernels/glsl_uses.cpp) sets NXV_USE_<name> for the names a kernel's defines
// mention and, reading these sources, for everything those definitions mention in turn. Give a
// new definition such a guard (a definition left unguarded is always compiled); its
// dependencies need no list. Without NXV_SELECT, everything is compiled.

// Nx (Erlang) max/min: NaN wins; on equality the first operand is returned (-0.0 vs 0.0).
#define NXV_FMAX(a, b) ((isnan(a) || isnan(b)) ? ((a) + (b)) : ((a) >= (b) ? (a) : (b)))
#define NXV_FMIN(a, b) ((isnan(a) || isnan(b)) ? ((a) + (b)) : ((a) <= (b) ? (a) : (b)))
#define NXV_IMAX(a, b) ((a) >= (b) ? (a) : (b))
#define NXV_IMIN(a, b) ((a) <= (b) ? (a) : (b))

// bfloat16 is stored as its bit pattern; Nx writes it by truncating an f32.
#if NXV_STORAGE16
#if !NXV_SELECT || defined(NXV_USE_nxv_bf16_load)
float nxv_bf16_load(uint16_t x) { return uintBitsToFloat(uint(x) << 16); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_bf16_store)
uint16_t nxv_bf16_store(float x) { return uint16_t(floatBitsToUint(x) >> 16); }
#endif
#endif
#if NXV_STORAGE8 || NXV_STORAGE16
#include "nxv_f16_bits.glsl"
#endif
#if NXV_STORAGE8
#include "nxv_f8.glsl"
#endif

// GLSL's exp/log may be off by many ulps (exp: 3 + 2|x| ulp) and flush subnormals; Nx rounds
// the exact result once. These stay within ~1 ulp on any driver. No fma(): llvmpipe's loses
// precision, while plain a * b + c is exact where it matters (k * ln2_hi) and may still fuse.
const float NXV_LN2F_HI = 0.693359375;  // few bits: k * NXV_LN2F_HI is exact
const float NXV_LN2F_LO = -2.12194440e-4;

// e^r - 1 for |r| <= 0.35 (a reduced argument): Taylor terms to r^7 / 7!.
#if !NXV_SELECT || defined(NXV_USE_nxv_expm1f_reduced)
float nxv_expm1f_reduced(float r) {
  float p = 1.0 / 5040.0;
  p = (p * r + 1.0 / 720.0);
  p = (p * r + 1.0 / 120.0);
  p = (p * r + 1.0 / 24.0);
  p = (p * r + 1.0 / 6.0);
  p = (p * r + 0.5);
  return p * r * r + r;
}
#endif

// e^r 2^k for |r| <= 0.35 (the reduced argument) and integer k.
#if !NXV_SELECT || defined(NXV_USE_nxv_expf_reduced)
float nxv_expf_reduced(float r, float k) {
  float e = 1.0 + nxv_expm1f_reduced(r);
  int ki = int(k);
  int k1 = ki / 2;  // two steps keep 2^k finite near overflow and exact into subnormals
  // Powers of two built from bits: some drivers implement ldexp through an approximate exp2.
  return (e * uintBitsToFloat(uint(k1 + 127) << 23)) * uintBitsToFloat(uint(ki - k1 + 127) << 23);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_expf)
float nxv_expf(float x) {
  if (isnan(x)) return x;
  if (x > 88.72283935546875) return 1.0 / 0.0;
  if (x < -103.97208404541016) return 0.0;
  float k = floor(x * 1.44269504 + 0.5);
  return nxv_expf_reduced((x - k * NXV_LN2F_HI) - k * NXV_LN2F_LO, k);
}
#endif

// log(m 2^e) for m in [1, 2) given by its bits (exponent field 127).
#if !NXV_SELECT || defined(NXV_USE_nxv_logf_parts)
float nxv_logf_parts(uint mbits, int e) {
  float m = uintBitsToFloat(mbits);
  if (m > 1.41421356) {
    m *= 0.5;
    e += 1;
  }
  float f = m - 1.0;
  float s = f / (2.0 + f);
  float s2 = s * s;
  float t = 1.0 / 11.0;
  t = (t * s2 + 1.0 / 9.0);
  t = (t * s2 + 1.0 / 7.0);
  t = (t * s2 + 1.0 / 5.0);
  t = (t * s2 + 1.0 / 3.0);
  // log(1+f) = f - f^2/2 + s (f^2/2 + R), the fdlibm arrangement that keeps small f exact.
  float hfsq = 0.5 * f * f;
  float R = s2 * t * 2.0;  // 2 (s^2/3 + s^4/5 + ...)
  float log1pf = f - (hfsq - s * (hfsq + R));
  const float ln2_hi = 0.693359375;
  const float ln2_lo = -2.12194440e-4;
  float de = float(e);
  return de * ln2_hi + (de * ln2_lo + log1pf);
}
#endif

// log x for a normal, finite x > 0: no special cases (log1p's argument).
#if !NXV_SELECT || defined(NXV_USE_nxv_log_normal)
float nxv_log_normal(float x) {
  uint bits = floatBitsToUint(x);
  return nxv_logf_parts((bits & 0x7FFFFFu) | (127u << 23), int(bits >> 23) - 127);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_logf)
float nxv_logf(float x) {
  if (isnan(x) || x < 0.0) return 0.0 / 0.0;
  if (x == 0.0) return -1.0 / 0.0;
  if (isinf(x)) return x;
  uint bits = floatBitsToUint(x);
  if ((bits >> 23) == 0u) {  // subnormal: normalise by hand, drivers may flush them
    int lz = 31 - findMSB(bits);  // leading zeros in 32 bits
    return nxv_logf_parts(((bits << uint(lz - 8)) & 0x7FFFFFu) | (127u << 23), -126 - (lz - 8));
  }
  return nxv_log_normal(x);
}
#endif

// Low 32 bits of trunc(x) for finite x, as Nx's as_type writes an integer (wrapping).
#if !NXV_SELECT || defined(NXV_USE_nxv_trunc_low32)
uint nxv_trunc_low32(float x) {
  uint bits = floatBitsToUint(x);
  int e = int((bits >> 23) & 0xFFu) - 127;
  uint m = (bits & 0x7FFFFFu) | 0x800000u;
  uint mag = e < 0 ? 0u : (e <= 23 ? (m >> uint(23 - e)) : (e - 23 < 32 ? (m << uint(e - 23)) : 0u));
  return (bits >> 31) != 0u ? (0u - mag) : mag;
}
#endif

#if NXV_INT64
// 64-bit literals must be spelled here, after the int64 extension is enabled (not in -D macros).
const uint64_t NXV_U64_MAX = 18446744073709551615ul;
const int64_t NXV_S64_MAX = 9223372036854775807l;
const int64_t NXV_S64_MIN = -9223372036854775807l - 1l;

#if !NXV_SELECT || defined(NXV_USE_nxv_trunc_low64)
uint64_t nxv_trunc_low64(float x) {
  uint bits = floatBitsToUint(x);
  int e = int((bits >> 23) & 0xFFu) - 127;
  uint64_t m = uint64_t((bits & 0x7FFFFFu) | 0x800000u);
  uint64_t mag = e < 0 ? 0ul : (e <= 23 ? (m >> uint(23 - e)) : (e - 23 < 64 ? (m << uint(e - 23)) : 0ul));
  return (bits >> 31) != 0u ? (0ul - mag) : mag;
}
#endif
#endif

#if NXV_F64 && NXV_INT64
#if !NXV_SELECT || defined(NXV_USE_nxv_trunc_low64)
uint64_t nxv_trunc_low64(double x) {
  uint64_t bits = doubleBitsToUint64(x);
  int e = int((bits >> 52) & 0x7FFul) - 1023;
  uint64_t m = (bits & 0xFFFFFFFFFFFFFul) | 0x10000000000000ul;
  uint64_t mag = e < 0 ? 0ul : (e <= 52 ? (m >> uint(52 - e)) : (e - 52 < 64 ? (m << uint(e - 52)) : 0ul));
  return (bits >> 63) != 0ul ? (0ul - mag) : mag;
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_trunc_low32)
uint nxv_trunc_low32(double x) { return uint(nxv_trunc_low64(x)); }
#endif

// The order (-1, 0, 1) of an integer and a double that is not NaN, exact as Erlang compares
// numbers (converting the integer would round from 2^53 on).
#if !NXV_SELECT || defined(NXV_USE_nxv_order)
int nxv_order(int64_t i, double f) {
  if (f >= 9223372036854775808.0LF) return -1;
  if (f < -9223372036854775808.0LF) return 1;
  double t = trunc(f);
  int64_t ti = int64_t(t);
  if (i != ti) return i < ti ? -1 : 1;
  return f > t ? -1 : (f < t ? 1 : 0);
}
int nxv_order(uint64_t i, double f) {
  if (f >= 18446744073709551616.0LF) return -1;
  if (f < 0.0LF) return 1;
  double t = trunc(f);
  uint64_t ti = uint64_t(t);
  if (i != ti) return i < ti ? -1 : 1;
  return f > t ? -1 : 0;
}
int nxv_order(double f, int64_t i) { return -nxv_order(i, f); }
int nxv_order(double f, uint64_t i) { return -nxv_order(i, f); }
#endif
#endif

#if NXV_F64
// GLSL has no double exp/log: Cody-Waite reduction and polynomials good to ~1 ulp.
#if !NXV_SELECT || defined(NXV_USE_nxv_exp)
double nxv_exp(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384LF) return 1.0LF / 0.0LF;
  if (x < -745.1332191019412LF) return 0.0LF;
  const double ln2_hi = 6.93147180369123816490e-01LF;
  const double ln2_lo = 1.90821492927058770002e-10LF;
  // k = x / ln2 rounded to an integer by the 1.5 * 2^52 shifter, whose low word then holds k:
  // no floor, no conversion to int (slow, and on a loop kernel's critical path). precise: no
  // compiler may fold (t - shifter) back into x / ln2.
  const double shifter = 6755399441055744.0LF;
  precise double t = x * 1.44269504088896338700LF + shifter;
  precise double k = t - shifter;
  double r = (x - k * ln2_hi) - k * ln2_lo;
  // exp(r) on |r| <= ln2/2 by its Taylor series (terms to r^13 / 13!): (e^r - 1 - r) / r^2 as
  // a polynomial of degree 11 in Estrin's form, multiply-adds four deep where Horner's rule
  // takes eleven (a loop kernel evaluates exp on its critical path).
  double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
  double q0 = 1.0LF / 6.0LF * r + 0.5LF;
  double q1 = 1.0LF / 120.0LF * r + 1.0LF / 24.0LF;
  double q2 = 1.0LF / 5040.0LF * r + 1.0LF / 720.0LF;
  double q3 = 1.0LF / 362880.0LF * r + 1.0LF / 40320.0LF;
  double q4 = 1.0LF / 39916800.0LF * r + 1.0LF / 3628800.0LF;
  double q5 = 1.0LF / 6227020800.0LF * r + 1.0LF / 479001600.0LF;
  double p = (q5 * r2 + q4) * r8 + ((q3 * r2 + q2) * r4 + (q1 * r2 + q0));
  p = p * r2 + r;
  double e = 1.0LF + p;
  int ki = int(unpackDouble2x32(t).x);
  // Two steps so that 2^k stays representable near the overflow and subnormal ends; powers of
  // two built from bits (some drivers implement ldexp through an approximate exp2).
  int k1 = ki / 2;
  double s1 = packDouble2x32(uvec2(0u, uint(k1 + 1023) << 20));
  double s2 = packDouble2x32(uvec2(0u, uint(ki - k1 + 1023) << 20));
  return (e * s1) * s2;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_log)
double nxv_log(double x) {
  if (isnan(x) || x < 0.0LF) return 0.0LF / 0.0LF;
  if (x == 0.0LF) return -1.0LF / 0.0LF;
  if (isinf(x)) return x;
  int e;
  int bias = 0;
  if (x < 2.2250738585072014e-308LF) {  // subnormal: scale into the normal range first
    x *= 18014398509481984.0LF;         // 2^54
    bias = 54;
  }
  double m = frexp(x, e);
  e -= bias;  // x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440LF) {
    m *= 2.0LF;
    e -= 1;
  }
  double f = m - 1.0LF;
  double s = f / (2.0LF + f);
  double s2 = s * s;
  // log(1+f) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), |s| < 0.172, arranged as in fdlibm.
  double t = 1.0LF / 23.0LF;
  t = t * s2 + 1.0LF / 21.0LF;
  t = t * s2 + 1.0LF / 19.0LF;
  t = t * s2 + 1.0LF / 17.0LF;
  t = t * s2 + 1.0LF / 15.0LF;
  t = t * s2 + 1.0LF / 13.0LF;
  t = t * s2 + 1.0LF / 11.0LF;
  t = t * s2 + 1.0LF / 9.0LF;
  t = t * s2 + 1.0LF / 7.0LF;
  t = t * s2 + 1.0LF / 5.0LF;
  t = t * s2 + 1.0LF / 3.0LF;
  double hfsq = 0.5LF * f * f;
  double log1pf = f - (hfsq - s * (hfsq + 2.0LF * s2 * t));
  const double ln2_hi = 6.93147180369123816490e-01LF;
  const double ln2_lo = 1.90821492927058770002e-10LF;
  double de = double(e);
  return de * ln2_hi + (log1pf + de * ln2_lo);
}
#endif
#endif

// ---- Per-type primitives for nxv_real.glsl ----

#if !NXV_SELECT || defined(NXV_USE_nxv_exp)
float nxv_exp(float x) { return nxv_expf(x); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_log)
float nxv_log(float x) { return nxv_logf(x); }
#endif

// x * 2^k exactly (while representable), powers of two built from bits in steps.
#if !NXV_SELECT || defined(NXV_USE_nxv_scale)
float nxv_scale(float x, int k) {
  for (int i = 0; i < 4 && k != 0; ++i) {
    int s = clamp(k, -126, 127);
    x *= uintBitsToFloat(uint(s + 127) << 23);
    k -= s;
  }
  return x;
}
#endif

// 2^k for -126 <= k <= 127, from the bits.
#if !NXV_SELECT || defined(NXV_USE_nxv_pow2)
float nxv_pow2(float like, int k) { return uintBitsToFloat(uint(k + 127) << 23); }
#endif

// |x| = (m1 2^32 + m0) 2^e for finite normal x.
#if !NXV_SELECT || defined(NXV_USE_nxv_mantissa)
void nxv_mantissa(float x, out uint m0, out uint m1, out int e) {
  uint b = floatBitsToUint(x);
  m0 = (b & 0x7FFFFFu) | 0x800000u;
  m1 = 0u;
  e = int((b >> 23) & 0xFFu) - 150;
}
#endif

// The first 1280 bits of 2/pi, most significant word first.
#if !NXV_SELECT || defined(NXV_USE_NXV_TWO_OVER_PI)
const uint NXV_TWO_OVER_PI[40] = uint[](
    0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u,
    0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u,
    0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
    0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu,
    0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);
#endif

#define T float
#define K(x) float(x)  // literals are written as doubles; folded to float
#define NXV_MANT 24
#define NXV_LN2_HI 0.693359375
#define NXV_LN2_LO (-2.12194440e-4)
#define NXV_EXP_MAX 88.72283935546875
#define NXV_PIO2_1 1.5703125
#define NXV_PIO2_2 4.837512969970703125e-4
#define NXV_PIO2_3 7.54978995489188216e-8
#define NXV_RED_MAX 8192.0
#define NXV_SPLIT 4097.0
#define NXV_SQRT_LO 1.0e-30
#define NXV_SQRT_HI 1.0e30
#define NXV_SQRT_SHIFT 60
#define NXV_MIN_NORMAL 1.17549435082228750797e-38
#include "nxv_real.glsl"
#include "nxv_real_trig.glsl"
#include "nxv_real_pow.glsl"
#include "nxv_real_end.glsl"
#include "nxv_sqrt_f32.glsl"
#include "nxv_asin_f32.glsl"
#include "nxv_atanh_f32.glsl"
#include "nxv_asinh_f32.glsl"

#if NXV_F64
#if !NXV_SELECT || defined(NXV_USE_nxv_scale)
double nxv_scale(double x, int k) {
  for (int i = 0; i < 4 && k != 0; ++i) {
    int s = clamp(k, -1022, 1023);
    x *= packDouble2x32(uvec2(0u, uint(s + 1023) << 20));
    k -= s;
  }
  return x;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_log_normal)
double nxv_log_normal(double x) { return nxv_log(x); }
#endif

// 2^k for -1022 <= k <= 1023, from the bits.
#if !NXV_SELECT || defined(NXV_USE_nxv_pow2)
double nxv_pow2(double like, int k) { return packDouble2x32(uvec2(0u, uint(k + 1023) << 20)); }
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_mantissa)
void nxv_mantissa(double x, out uint m0, out uint m1, out int e) {
  uvec2 u = unpackDouble2x32(x);
  m0 = u.x;
  m1 = (u.y & 0xFFFFFu) | 0x100000u;
  e = int((u.y >> 20) & 0x7FFu) - 1075;
}
#endif

#define T double
#define K(x) x
#define NXV_MANT 53
#define NXV_LN2_HI 6.93147180369123816490e-01LF
#define NXV_LN2_LO 1.90821492927058770002e-10LF
#define NXV_EXP_MAX 709.782712893384LF
#define NXV_PIO2_1 1.57079632673412561417e+00LF
#define NXV_PIO2_2 6.07710050630396597660e-11LF
#define NXV_PIO2_3 2.02226624871116645580e-21LF
#define NXV_RED_MAX 262144.0LF
#define NXV_SPLIT 134217729.0LF
#define NXV_SQRT_LO 1.0e-290LF
#define NXV_SQRT_HI 1.0e290LF
#define NXV_SQRT_SHIFT 500
#define NXV_MIN_NORMAL 2.2250738585072014e-308LF
#include "nxv_real.glsl"
#include "nxv_real_trig.glsl"
#include "nxv_real_pow.glsl"
#include "nxv_real_end.glsl"
#include "nxv_to_f32.glsl"
#if NXV_POW_F32  // its tables take shared memory: only in pow's kernels
#include "nxv_pow_f32.glsl"
#endif
#endif

#include "nxv_int.glsl"

#define NXV_CLIP(x, lo, hi) nxv_clip(x, lo, hi)
#if !NXV_SELECT || defined(NXV_USE_nxv_nz)
bool nxv_nz(int x) { return x != 0; }
bool nxv_nz(uint x) { return x != 0u; }
#endif
#if NXV_INT64
#if !NXV_SELECT || defined(NXV_USE_nxv_nz)
bool nxv_nz(int64_t x) { return x != 0l; }
bool nxv_nz(uint64_t x) { return x != 0ul; }
#endif
#endif
#define I int
#include "nxv_clip_int.glsl"
#undef I
#define I uint
#include "nxv_clip_int.glsl"
#undef I
#if NXV_INT64
#define I int64_t
#include "nxv_clip_int.glsl"
#undef I
#define I uint64_t
#include "nxv_clip_int.glsl"
#undef I
#endif

// ---- Complex (vec2 / dvec2 as (re, im)) ----
#define CT vec2
#define T float
#define K(x) float(x)  // literals are written as doubles; folded to float
#include "nxv_complex.glsl"
#undef CT
#undef T
#undef K
#if NXV_F64
#define CT dvec2
#define T double
#define K(x) x
#include "nxv_complex.glsl"
#undef CT
#undef T
#undef K
#endif
