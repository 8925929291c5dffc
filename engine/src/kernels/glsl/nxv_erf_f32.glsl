// erf, erfc and erf_inv for single precision (included by nxv_real.glsl when T is float). The
// double versions sum series and continued fractions to full precision; for float results
// these cost hundreds of operations per element, where a few polynomials do (measured worst
// cases: erf 2 ulp, erfc 4, erf_inv 3; fixtures allow 8 for erf/erfc and 32 for erf_inv).

// erf: one polynomial chain per element (a GPU runs both sides of a per-element choice). Below
// 0.75 the Taylor series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n + 1)) to n = 8, in z = x^2,
// times x; on [0.75, 3.92) erf itself, fitted in t = (x - 2.335) / 1.585 (degree 14, float
// Horner within 1.9 ulp). The chain starts with the fit's top six coefficients and takes the
// Taylor ones, picked per element, from degree 8.
#if !NXV_SELECT || defined(NXV_USE_nxv_erf)
T nxv_erf(T x) {
  if (isnan(x)) return x;
  T ax = abs(x);
  bool small = ax < K(0.75LF);
  T v = small ? ax * ax : (ax - K(2.335LF)) * K(0.6309148073196411LF);
  T p = K(9.096132708e-04LF);
  p = p * v + K(-9.946728824e-04LF);
  p = p * v + K(-4.504789598e-03LF);
  p = p * v + K(8.585730568e-03LF);
  p = p * v + K(2.856818959e-03LF);
  p = p * v + K(-2.369342931e-02LF);
  p = small ? K(0.0LF) : p;
  p = p * v + (small ? K(1.646211437e-06LF) : K(2.914738655e-02LF));
  p = p * v + (small ? K(-1.492565036e-05LF) : K(-1.755770063e-03LF));
  p = p * v + (small ? K(1.205533298e-04LF) : K(-4.960478842e-02LF));
  p = p * v + (small ? K(-8.548327023e-04LF) : K(9.101821482e-02LF));
  p = p * v + (small ? K(5.223977625e-03LF) : K(-9.389166534e-02LF));
  p = p * v + (small ? K(-2.686617065e-02LF) : K(6.359548867e-02LF));
  p = p * v + (small ? K(1.128379167e-01LF) : K(-2.837544121e-02LF));
  p = p * v + (small ? K(-3.761263890e-01LF) : K(7.666617632e-03LF));
  p = p * v + (small ? K(1.128379167e+00LF) : K(9.990406632e-01LF));
  T r = ax >= K(3.92LF) ? K(1.0LF) : (small ? ax * p : p);
  return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));  // erf(-0) = -0
}
#endif

// erfc: one chain for every element (a GPU runs both sides of a per-element choice).
// erfc(a) = e^-a^2 G(a) for a = |x| (2 minus it for x < 0), where G(a) = erfc(a) e^(a^2) is
// smooth on [0, inf): G = H(v) / (a + 1) with v = (a - 1) / (a + 1) = 1 - 2 / (a + 1) in
// [-1, 0.82] and H fitted (degree 11, weighted least squares toward minimax relative error,
// 2e-8). The rounding error of a + 1 joins 1 / (a + 1) in its Newton step, so that v and the
// quotient stay exact to float rounding for small a. e^-a^2 from a = xh + xl with xh on 8
// fraction bits (xh^2 and xh^2 - k ln2_hi exact; d = a^2 - xh^2 joins the reduced argument
// afterwards), its last step 1 + p folded into the product. Worst case 4 ulp in a float
// model of this code (3 where a * b + c fuses). Integers by shifts and rounding by adding
// 1.5 * 2^23 rather than conversion instructions, which a fast GPU issues at a quarter rate.
#if !NXV_SELECT || defined(NXV_USE_nxv_erfc)
T nxv_erfc(T x) {
  T a = min(abs(x), K(10.1LF));  // erfc rounds to zero from 10.06 on (NaN: selected at the end)
  // e^-a^2 = (1 + pe) 2^k.
  precise T xh = (a + K(32768.0LF)) - K(32768.0LF);  // a to the nearest multiple of 2^-8
  T d = (a - xh) * (a + xh);
  T hi = xh * xh;
  precise T kt = (hi + d) * K(-1.44269504LF) + K(12582912.0LF);  // k in the low bits
  T k = kt - K(12582912.0LF);
  T rr = ((-hi - k * NXV_LN2F_HI) - d) - k * NXV_LN2F_LO;
  T pe = nxv_expm1f_reduced(rr);
  // r = 1 / (a + 1) with s + ds = a + 1 exactly (s - 1 is exact for every a >= 0).
  T s = a + K(1.0LF);
  precise T ds = a - (s - K(1.0LF));
  T r = K(1.0LF) / s;
  r = r + r * ((K(1.0LF) - s * r) - ds * r);
  T v = K(1.0LF) - K(2.0LF) * r;
  T p = K(3.291096946e-04LF);
  p = p * v + K(7.559945807e-04LF);
  p = p * v + K(-1.806043147e-04LF);
  p = p * v + K(-2.482349752e-03LF);
  p = p * v + K(-3.879126394e-03LF);
  p = p * v + K(-1.177771017e-03LF);
  p = p * v + K(9.604337625e-03LF);
  p = p * v + K(2.538799681e-02LF);
  p = p * v + K(1.390210632e-02LF);
  p = p * v + K(-9.555590153e-02LF);
  p = p * v + K(-2.376806885e-01LF);
  p = p * v + K(8.551671505e-01LF);
  T g = p * r;
  // 2^(k + 64) from kt's low bits (k + 191 is in [45, 191]), then 2^-64: exact into the
  // subnormals.
  T scale = uintBitsToFloat((floatBitsToUint(kt) << 23) + (191u << 23));
  T e = ((g + pe * g) * scale) * K(5.42101086242752217e-20LF);
  // NaN by a select, not an early return: the branch around the body cost more than its
  // instructions (H200: 0.81-0.86 -> 0.85-0.91 of copy bandwidth without it).
  return isnan(x) ? x : (x < K(0.0LF) ? K(2.0LF) - e : e);
}
#endif

// Inverse error function: Giles' estimate (nxv_real.glsl), within 3 ulp on its own (a Newton
// step on erf tripled the cost and did not lower the worst case of the tests). The special
// operands by selects after it rather than early returns (H200: 0.80-0.86 -> 0.83-0.90 of copy
// bandwidth); |x| >= 1 gives log_normal a positive normal argument whose result is discarded.
#if !NXV_SELECT || defined(NXV_USE_nxv_erf_inv)
T nxv_erf_inv(T x) {
  T ax = abs(x);
  T r = nxv_erf_inv_giles(x, max((K(1.0LF) - ax) * (K(1.0LF) + ax), NXV_MIN_NORMAL));  // keeps -0.0
  r = ax == K(1.0LF) ? x / (x - x) : r;  // +-inf (x / 0.0 may be folded)
  return (ax > K(1.0LF) || isnan(x)) ? nxv_nan(x) : r;
}
#endif
