// Real math on one float type, included once per type by nxv_math.glsl with
//   T: float or double;  K(x): a literal of type T, written with the LF suffix;  NXV_MANT: mantissa bits (24 or 53);
//   NXV_LN2_HI/LO: ln 2 split so that k * HI is exact;  NXV_EXP_MAX: largest x with finite exp.
// Needs nxv_exp(T), nxv_log(T), nxv_log_normal(T) (log without special cases), nxv_pow2(T, int)
// and nxv_scale(T, int) (x * 2^k exactly) defined for T first.
// Every function stays within a few ulps of the correctly rounded result, keeps subnormals and
// never relies on the driver's transcendental built-ins. No fma(): see nxv_math.glsl. Compensated
// steps (error-free sums and products, log1p's correction) are `precise`: without it NVIDIA's
// compiler simplifies (1 + x) - 1 to x.

#if !NXV_SELECT || defined(NXV_USE_nxv_nan)
T nxv_nan(T x) { return (x - x) / (x - x); }  // 0/0 without a compile-time constant fold warning
#endif

// frexp that also normalises subnormals (drivers' frexp may flush them to zero).
#if !NXV_SELECT || defined(NXV_USE_nxv_frexp)
T nxv_frexp(T x, out int e) {
  if (x != K(0.0LF) && abs(x) < NXV_MIN_NORMAL) {
    T m = frexp(nxv_scale(x, NXV_MANT), e);
    e -= NXV_MANT;
    return m;
  }
  return frexp(x, e);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_copysign)
T nxv_copysign(T mag, T s) { return (s < K(0.0LF) || (s == K(0.0LF) && K(1.0LF) / s < K(0.0LF))) ? -abs(mag) : abs(mag); }
#endif

// Nx round: half away from zero; a zero result is +0 (Erlang returns the integer 0).
#if !NXV_SELECT || defined(NXV_USE_nxv_round)
T nxv_round(T x) {
  if (isnan(x) || isinf(x)) return x;
  T t = trunc(x);
  if (abs(x - t) >= K(0.5LF)) t += (x < K(0.0LF) ? K(-1.0LF) : K(1.0LF));
  return t == K(0.0LF) ? K(0.0LF) : t;
}
#endif

// Nx.BinaryBackend compares the atoms :nan, :infinity and :neg_infinity as terms: all > 0.
#if !NXV_SELECT || defined(NXV_USE_nxv_sign)
T nxv_sign(T x) { return (isnan(x) || isinf(x)) ? K(1.0LF) : x > K(0.0LF) ? K(1.0LF) : (x < K(0.0LF) ? K(-1.0LF) : x); }
#endif

// C fmod, exact: subtract |y| scaled by powers of two.
#if !NXV_SELECT || defined(NXV_USE_nxv_fmod)
T nxv_fmod(T x, T y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == K(0.0LF)) return nxv_nan(K(0.0LF));
  if (isinf(y)) return x;
  T ax = abs(x), ay = abs(y), r = ax;
  for (int i = 0; i < 2200 && r >= ay; ++i) {
    int er, ey;
    nxv_frexp(r, er);
    nxv_frexp(ay, ey);
    T d = nxv_scale(ay, er - ey);
    if (d > r) d = nxv_scale(ay, er - ey - 1);
    r -= d;
  }
  return x < K(0.0LF) ? -r : (r == K(0.0LF) ? (x == K(0.0LF) ? x : K(0.0LF)) : r);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_expm1)
T nxv_expm1(T x) {
  if (isnan(x) || x == K(0.0LF)) return x;  // keeps -0.0
  if (x > NXV_EXP_MAX) return K(1.0LF) / K(0.0LF);
  if (x < K(-45.0LF)) return K(-1.0LF);
  T k = floor(x * K(1.44269504088896338700LF) + K(0.5LF));
  if (abs(x) < K(0.34657359027997264LF)) k = K(0.0LF);
  T r = (x - k * NXV_LN2_HI) - k * NXV_LN2_LO;
  // expm1(r) = r + r^2 (1/2 + r/6 + ...), |r| <= ln2/2: terms to r^15.
#if NXV_MANT > 24
  T p = K(1.0LF) / K(20922789888000.0LF);
  p = p * r + K(1.0LF) / K(1307674368000.0LF);
  p = p * r + K(1.0LF) / K(87178291200.0LF);
  p = p * r + K(1.0LF) / K(6227020800.0LF);
  p = p * r + K(1.0LF) / K(479001600.0LF);
  p = p * r + K(1.0LF) / K(39916800.0LF);
  p = p * r + K(1.0LF) / K(3628800.0LF);
  p = p * r + K(1.0LF) / K(362880.0LF);
#else  // float: terms to r^9 / 9! (the next is below 2^-33 of r)
  T p = K(1.0LF) / K(362880.0LF);
#endif
  p = p * r + K(1.0LF) / K(40320.0LF);
  p = p * r + K(1.0LF) / K(5040.0LF);
  p = p * r + K(1.0LF) / K(720.0LF);
  p = p * r + K(1.0LF) / K(120.0LF);
  p = p * r + K(1.0LF) / K(24.0LF);
  p = p * r + K(1.0LF) / K(6.0LF);
  p = p * r + K(0.5LF);
  T em = r + (r * r) * p;
  int ki = int(k);
  if (ki == 0) return em;
  if (ki > NXV_MANT + 6) return nxv_exp(x) - K(1.0LF);
  T t = nxv_pow2(x, ki);  // -65 <= ki <= NXV_MANT + 6 here
  return t * em + (t - K(1.0LF));
}
#endif

// log1p of a finite x > -1, no special cases (asinh's and acosh's arguments are such).
#if !NXV_SELECT || defined(NXV_USE_nxv_log1p_core)
T nxv_log1p_core(T x) {
  precise T u = K(1.0LF) + x;
  if (u == K(1.0LF)) return x;
  precise T c = (u - K(1.0LF) == x) ? K(0.0LF) : (x - (u - K(1.0LF))) / u;
  return nxv_log_normal(u) + c;  // u = 1 + x is normal here
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_log1p)
T nxv_log1p(T x) {
  if (isnan(x) || x < K(-1.0LF)) return nxv_nan(x);
  if (x == K(-1.0LF)) return K(-1.0LF) / K(0.0LF);
  if (isinf(x)) return x;
  return nxv_log1p_core(x);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sigmoid)
T nxv_sigmoid(T x) { return x < K(-40.0LF) ? nxv_exp(x) : K(1.0LF) / (K(1.0LF) + nxv_exp(-x)); }
#endif

#if NXV_MANT == 24
#include "nxv_sinh_tanh_f32.glsl"
#else
#if !NXV_SELECT || defined(NXV_USE_nxv_sinh)
T nxv_sinh(T x) {
  if (isnan(x) || isinf(x) || x == K(0.0LF)) return x;  // keeps -0.0
  T ax = abs(x), s;
  if (ax < K(1.0LF)) {
    T t = nxv_expm1(ax);
    s = K(0.5LF) * (t + t / (t + K(1.0LF)));
  } else if (ax < NXV_EXP_MAX - K(1.0LF)) {
    T e = nxv_exp(ax);
    s = K(0.5LF) * e - K(0.5LF) / e;
  } else {
    T h = nxv_exp(K(0.5LF) * ax);
    s = (K(0.5LF) * h) * h;
  }
  return x < K(0.0LF) ? -s : s;
}
#endif
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cosh)
T nxv_cosh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  if (ax < NXV_EXP_MAX - K(1.0LF)) {
    T e = nxv_exp(ax);
    return K(0.5LF) * e + K(0.5LF) / e;
  }
  T h = nxv_exp(K(0.5LF) * ax);
  return (K(0.5LF) * h) * h;
}
#endif

#if NXV_MANT > 24  // float: nxv_sinh_tanh_f32.glsl
#if !NXV_SELECT || defined(NXV_USE_nxv_tanh)
T nxv_tanh(T x) {
  if (isnan(x)) return x;
  T ax = abs(x), r;
  if (ax > K(40.0LF)) r = K(1.0LF);
  else {
    T t = nxv_expm1(K(2.0LF) * ax);
    r = t / (t + K(2.0LF));
  }
  return x < K(0.0LF) || (x == K(0.0LF) && K(1.0LF) / x < K(0.0LF)) ? -r : r;
}
#endif
#endif

// atan on [0, inf): reduce to |y| <= tan(pi/12) and sum the series.
#if !NXV_SELECT || defined(NXV_USE_nxv_atan_pos)
T nxv_atan_pos(T x) {
  bool inv = x > K(1.0LF);
  if (inv) x = K(1.0LF) / x;
  T base = K(0.0LF);
  if (x > K(0.26794919243112270647LF)) {
    x = (x * K(1.73205080756887729353LF) - K(1.0LF)) / (K(1.73205080756887729353LF) + x);
    base = K(0.52359877559829887308LF);
  }
  T z = x * x;
#if NXV_MANT > 24
  T p = K(1.0LF) / K(33.0LF);
  p = K(1.0LF) / K(31.0LF) - z * p;
  p = K(1.0LF) / K(29.0LF) - z * p;
  p = K(1.0LF) / K(27.0LF) - z * p;
  p = K(1.0LF) / K(25.0LF) - z * p;
  p = K(1.0LF) / K(23.0LF) - z * p;
  p = K(1.0LF) / K(21.0LF) - z * p;
  p = K(1.0LF) / K(19.0LF) - z * p;
  p = K(1.0LF) / K(17.0LF) - z * p;
#else  // float: terms to x^17 / 17 (z <= 0.072: the next is below 2^-36)
  T p = K(1.0LF) / K(17.0LF);
#endif
  p = K(1.0LF) / K(15.0LF) - z * p;
  p = K(1.0LF) / K(13.0LF) - z * p;
  p = K(1.0LF) / K(11.0LF) - z * p;
  p = K(1.0LF) / K(9.0LF) - z * p;
  p = K(1.0LF) / K(7.0LF) - z * p;
  p = K(1.0LF) / K(5.0LF) - z * p;
  p = K(1.0LF) / K(3.0LF) - z * p;
  T a = base + (x - x * z * p);
  if (inv) a = (K(1.57079632679489655800LF) - a) + K(6.12323399573676603587e-17LF);
  return a;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_atan)
T nxv_atan(T x) {
  if (isnan(x)) return x;
  if (isinf(x)) return x > K(0.0LF) ? K(1.57079632679489661923LF) : K(-1.57079632679489661923LF);
  T a = nxv_atan_pos(abs(x));
  return x < K(0.0LF) || (x == K(0.0LF) && K(1.0LF) / x < K(0.0LF)) ? -a : a;
}
#endif

// C atan2(y, x).
#if !NXV_SELECT || defined(NXV_USE_nxv_atan2)
T nxv_atan2(T y, T x) {
  if (isnan(x) || isnan(y)) return nxv_nan(x);
  const T pi = K(3.14159265358979311600LF), pi_lo = K(1.22464679914735317723e-16LF);
  bool yneg = y < K(0.0LF) || (y == K(0.0LF) && K(1.0LF) / y < K(0.0LF));
  bool xneg = x < K(0.0LF) || (x == K(0.0LF) && K(1.0LF) / x < K(0.0LF));
  T r;
  if (y == K(0.0LF)) r = xneg ? pi : K(0.0LF);
  else if (x == K(0.0LF)) r = K(1.57079632679489661923LF);
  else if (isinf(x) && isinf(y)) r = xneg ? K(2.35619449019234492885LF) : K(0.78539816339744830962LF);
  else if (isinf(x)) r = xneg ? pi : K(0.0LF);
  else if (isinf(y)) r = K(1.57079632679489661923LF);
  else {
    T q = abs(y) / abs(x);
    r = isinf(q) ? K(1.57079632679489661923LF) : nxv_atan_pos(q);
    if (xneg) r = (pi - r) + pi_lo;
  }
  return yneg ? -r : r;
}
#endif

#if NXV_MANT > 24  // float: nxv_asin_f32.glsl
#if !NXV_SELECT || defined(NXV_USE_nxv_asin)
T nxv_asin(T x) {
  if (isnan(x) || abs(x) > K(1.0LF)) return nxv_nan(x);
  if (x == K(0.0LF)) return x;
  return nxv_atan2(x, sqrt((K(1.0LF) - x) * (K(1.0LF) + x)));
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_acos)
T nxv_acos(T x) {
  if (isnan(x) || abs(x) > K(1.0LF)) return nxv_nan(x);
  return nxv_atan2(sqrt((K(1.0LF) - x) * (K(1.0LF) + x)), x);
}
#endif
#endif

#if NXV_MANT > 24  // float: nxv_asinh_f32.glsl
#if !NXV_SELECT || defined(NXV_USE_nxv_asinh)
T nxv_asinh(T x) {
  if (isnan(x) || isinf(x) || x == K(0.0LF)) return x;
  T ax = abs(x), r;
  if (ax > K(1.0e15LF)) r = nxv_log(ax) + K(0.69314718055994530942LF);
  else if (ax > K(2.0LF)) r = nxv_log(K(2.0LF) * ax + K(1.0LF) / (sqrt(ax * ax + K(1.0LF)) + ax));
  else {
    T z = ax * ax;
    r = nxv_log1p_core(ax + z / (K(1.0LF) + sqrt(K(1.0LF) + z)));
  }
  return x < K(0.0LF) ? -r : r;
}
#endif
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_acosh)
T nxv_acosh(T x) {
  if (isnan(x) || x < K(1.0LF)) return nxv_nan(x);
  if (isinf(x)) return x;
  if (x > K(1.0e15LF)) return nxv_log(x) + K(0.69314718055994530942LF);
  if (x > K(2.0LF)) return nxv_log(K(2.0LF) * x - K(1.0LF) / (x + sqrt(x * x - K(1.0LF))));
  T t = x - K(1.0LF);
  return nxv_log1p_core(t + sqrt(K(2.0LF) * t + t * t));
}
#endif

#if NXV_MANT > 24  // float: nxv_atanh_f32.glsl
#if !NXV_SELECT || defined(NXV_USE_nxv_atanh)
T nxv_atanh(T x) {
  if (isnan(x) || abs(x) > K(1.0LF)) return nxv_nan(x);
  if (x == K(0.0LF)) return x;
  T ax = abs(x);
  T r = K(0.5LF) * nxv_log1p(K(2.0LF) * ax / (K(1.0LF) - ax));
  return x < K(0.0LF) ? -r : r;
}
#endif
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_cbrt)
T nxv_cbrt(T x) {
  if (isnan(x) || isinf(x) || x == K(0.0LF)) return x;
  T ax = abs(x);
  int e;
  T m = nxv_frexp(ax, e);  // ax = m 2^e, m in [0.5, 1)
  int r3 = (e + 3000) % 3;  // % of a negative int is undefined in GLSL (NVIDIA's differs)
  int q = (e - r3) / 3;
  m = nxv_scale(m, r3);  // [0.5, 4)
  // Newton on y^3 = m from a rough start.
  T y = K(0.7LF) + K(0.3LF) * m;
  for (int i = 0; i < 7; ++i) y = y - (y - m / (y * y)) / K(3.0LF);
  // One correction step in the form that converges to the rounded root.
  y = y + (m - y * y * y) / (K(3.0LF) * y * y);
  y = nxv_scale(y, q);
  return x < K(0.0LF) ? -y : y;
}
#endif

// Giles' single-precision estimate of erf_inv ("Approximating the erfinv function", GPU
// Computing Gems, 2011): within a few float ulps; the start of the double version's Newton steps.
// one_minus_x2: (1 - x)(1 + x), a normal number in (0, 1].
#if !NXV_SELECT || defined(NXV_USE_nxv_erf_inv_giles)
T nxv_erf_inv_giles(T x, T one_minus_x2) {
  T w = -nxv_log_normal(one_minus_x2), p;
  if (w < K(5.0LF)) {
    w = w - K(2.5LF);
    p = K(2.81022636e-08LF);
    p = K(3.43273939e-07LF) + p * w;
    p = K(-3.5233877e-06LF) + p * w;
    p = K(-4.39150654e-06LF) + p * w;
    p = K(0.00021858087LF) + p * w;
    p = K(-0.00125372503LF) + p * w;
    p = K(-0.00417768164LF) + p * w;
    p = K(0.246640727LF) + p * w;
    p = K(1.50140941LF) + p * w;
  } else {
    w = sqrt(w) - K(3.0LF);
    p = K(-0.000200214257LF);
    p = K(0.000100950558LF) + p * w;
    p = K(0.00134934322LF) + p * w;
    p = K(-0.00367342844LF) + p * w;
    p = K(0.00573950773LF) + p * w;
    p = K(-0.0076224613LF) + p * w;
    p = K(0.00943887047LF) + p * w;
    p = K(1.00167406LF) + p * w;
    p = K(2.83297682LF) + p * w;
  }
  return p * x;  // p > 0
}
#endif

#if NXV_MANT == 24
#include "nxv_erf_f32.glsl"
#else
// erf and erfc: series e^-x^2 sum 2^n x^(2n+1) / (2n+1)!! for small |x|, a continued fraction
// for large; e^-x^2 from a split x so that the square is exact.
#if !NXV_SELECT || defined(NXV_USE_nxv_exp_negsq)
T nxv_exp_negsq(T x) {
  T xh = nxv_scale(floor(nxv_scale(x, 12)), -12);  // few bits: xh * xh exact
  precise T d = (x - xh) * (x + xh);
  return nxv_exp(-xh * xh) * nxv_exp(-d);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_erf_series)
T nxv_erf_series(T x) {  // |x| <= 2.5
  T z = x * x, term = x, sum = x;
  for (int n = 1; n < 80; ++n) {
    term *= K(2.0LF) * z / T(2 * n + 1);
    sum += term;
    if (term < sum * K(1.0e-17LF)) break;
  }
  return K(1.12837916709551257390LF) * nxv_exp_negsq(x) * sum;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_erfc_cf)
T nxv_erfc_cf(T x) {  // x >= 2.5: e^-x^2 / sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...))))
  T f = x;
  for (int n = 60; n >= 1; --n) f = x + K(0.5LF) * T(n) / f;
  return K(0.56418958354775628695LF) * nxv_exp_negsq(x) / f;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_erf)
T nxv_erf(T x) {
  if (isnan(x)) return x;
  T ax = abs(x), r;
  if (ax > K(6.0LF)) r = K(1.0LF);
  else if (ax <= K(2.5LF)) r = nxv_erf_series(ax);
  else r = K(1.0LF) - nxv_erfc_cf(ax);
  return x < K(0.0LF) ? -r : (x == K(0.0LF) ? x : r);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_erfc)
T nxv_erfc(T x) {
  if (isnan(x)) return x;
  if (x < K(0.0LF)) return K(1.0LF) + nxv_erf(-x);
  // Below 0.75 the continued fraction needs thousands of terms; 1 - erf loses < 2 bits there.
  if (x < K(0.75LF)) return K(1.0LF) - nxv_erf(x);
  if (x > K(27.3LF)) return K(0.0LF);
  if (x >= K(2.5LF)) return nxv_erfc_cf(x);
  // 0.75 <= x < 2.5: the continued fraction converges slowly here; more terms.
  T f = x;
  for (int n = 400; n >= 1; --n) f = x + K(0.5LF) * T(n) / f;
  return K(0.56418958354775628695LF) * nxv_exp_negsq(x) / f;
}
#endif

// Inverse error function: Giles' estimate, then Newton steps on erf.
#if !NXV_SELECT || defined(NXV_USE_nxv_erf_inv)
T nxv_erf_inv(T x) {
  if (isnan(x) || abs(x) > K(1.0LF)) return nxv_nan(x);
  if (abs(x) == K(1.0LF)) return x / (x - x);  // +-inf (x / 0.0 may be folded)
  if (x == K(0.0LF)) return x;
  T y = nxv_erf_inv_giles(x, (K(1.0LF) - x) * (K(1.0LF) + x));
  T ax = abs(x);
  for (int i = 0; i < 3; ++i) {
    T ay = abs(y);
    // Near |x| = 1 use erfc to keep the residual accurate.
    T resid = ax > K(0.5LF) ? (K(1.0LF) - ax) - nxv_erfc(ay) : nxv_erf(ay) - ax;  // erf(ay) - ax
    T d = K(1.12837916709551257390LF) * nxv_exp_negsq(ay);
    if (d == K(0.0LF)) break;
    ay = ay - resid / d;
    y = x < K(0.0LF) ? -ay : ay;
  }
  return y;
}
#endif
#endif

// Error-free transformations (Dekker, Knuth; no fma: see nxv_math.glsl): a * b = p + e and
// a + b = s + e exactly, for |a|, |b| well inside the range (the split multiplies by NXV_SPLIT).
#if !NXV_SELECT || defined(NXV_USE_nxv_two_prod)
void nxv_two_prod(T a, T b, out T p, out T e) {
  precise T pp = a * b;
  precise T ca = a * NXV_SPLIT, cb = b * NXV_SPLIT;
  precise T ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
  precise T ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = ee;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_two_sum)
void nxv_two_sum(T a, T b, out T s, out T e) {
  precise T ss = a + b;
  precise T bb = ss - a;
  precise T ee = (a - (ss - bb)) + (b - bb);
  s = ss;
  e = ee;
}
#endif

// (ah + al) * (bh + bl) as a normalised pair.
#if !NXV_SELECT || defined(NXV_USE_nxv_dd_mul)
void nxv_dd_mul(T ah, T al, T bh, T bl, out T rh, out T rl) {
  T p, e0;
  nxv_two_prod(ah, bh, p, e0);
  precise T e = e0 + (ah * bl + al * bh);
  precise T h = p + e;
  precise T l = e - (h - p);
  rh = h;
  rl = l;
}
#endif

// Correctly rounded square root whatever the driver's sqrt: s from the driver, then the exact
// residual r = x - s^2 (nxv_two_prod) decides. With u the ulp of s, the midpoint
// (s + u/2)^2 = s^2 + s u + u^2/4; r and s u are multiples of u^2, so r > s u is the exact test
// for rounding up (and r < -s u' for rounding down, u' the ulp below s).
#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt_residual)
T nxv_sqrt_residual(T x, T s) {
  T p, e;
  nxv_two_prod(s, s, p, e);
  precise T r = (x - p) - e;
  return r;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt_core)
T nxv_sqrt_core(T x) {
  T s = sqrt(x);
  for (int i = 0; i < 2; ++i) {
    int e;
    T m = frexp(s, e);
    T u = nxv_scale(K(1.0LF), e - NXV_MANT);
    T ud = m == K(0.5LF) ? K(0.5LF) * u : u;
    T r = nxv_sqrt_residual(x, s);
    if (r > s * u) s += u;
    else if (r < -(s * ud)) s -= ud;
    else break;
  }
  return s;
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_sqrt)
T nxv_sqrt(T x) {
  if (!(x > K(0.0LF)) || isinf(x)) return x == K(0.0LF) ? x : (x < K(0.0LF) ? nxv_nan(x) : x);
  if (x < NXV_SQRT_LO) return nxv_scale(nxv_sqrt_core(nxv_scale(x, 2 * NXV_SQRT_SHIFT)), -NXV_SQRT_SHIFT);
  if (x > NXV_SQRT_HI) return nxv_scale(nxv_sqrt_core(nxv_scale(x, -2 * NXV_SQRT_SHIFT)), NXV_SQRT_SHIFT);
  return nxv_sqrt_core(x);
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_rsqrt)
T nxv_rsqrt(T x) { return K(1.0LF) / nxv_sqrt(x); }
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_clip)
T nxv_clip(T x, T lo, T hi) {
  T m = x > lo ? x : lo;
  return m < hi ? m : hi;
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_nz)
bool nxv_nz(T x) { return x != K(0.0LF); }
#endif
