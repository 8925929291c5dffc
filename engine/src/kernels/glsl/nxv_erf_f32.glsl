// erf, erfc and erf_inv for single precision (included by nxv_real.glsl when T is float). The
// double versions sum series and continued fractions to full precision; for float results
// these cost hundreds of operations per element, where a few polynomials do (measured worst
// cases: erf 2 ulp, erfc 4, erf_inv 3; fixtures allow 8 for erf/erfc and 32 for erf_inv).
// erfc(x) = e^-x^2 G(x): G fitted (weighted least squares toward minimax relative error, float
// Horner evaluation checked on 20001 points) on [0.75, 2] in t = (x - 1.375) / 0.625 and on
// [2, 10.1] in t = 1 / x; both within 2e-7 relative.

// e^-x^2 for x >= 0 (0 from 10.2 on) with one exp: x = xh + xl with xh on 8 fraction bits,
// so that xh^2 is exact and so is xh^2 - k ln2_hi (both multiples of 2^-16 below 2^8); the
// small d = x^2 - xh^2 and k ln2_lo join the reduced argument afterwards.
T nxv_exp_negsq(T x) {
  if (x >= K(10.2LF)) return K(0.0LF);  // below half the smallest subnormal
  T xh = floor(x * K(256.0LF)) * K(0.00390625LF);
  precise T d = (x - xh) * (x + xh);
  T hi = xh * xh;
  T k = floor((hi + d) * K(-1.44269504LF) + K(0.5LF));
  precise T r = ((-hi - k * NXV_LN2F_HI) - d) - k * NXV_LN2F_LO;
  return nxv_expf_reduced(r, k);
}

// G(x) = erfc(x) e^(x^2) for 0.75 <= x < 10.1.
T nxv_erfc_scaled(T x) {
  T p;
  if (x < K(2.0LF)) {
    T t = (x - K(1.375LF)) * K(1.6LF);
    p = K(-1.714101018e-06LF);
    p = p * t + K(8.377284757e-06LF);
    p = p * t + K(-3.463349640e-05LF);
    p = p * t + K(1.528078137e-04LF);
    p = p * t + K(-6.489477237e-04LF);
    p = p * t + K(2.607230097e-03LF);
    p = p * t + K(-9.888523258e-03LF);
    p = p * t + K(3.510235623e-02LF);
    p = p * t + K(-1.151971668e-01LF);
    p = p * t + K(3.432959020e-01LF);
  } else {
    T t = K(1.0LF) / x;
    t = t + t * (K(1.0LF) - x * t);  // one Newton step: drivers' division may be 2.5 ulp off
    p = K(-9.762381017e-02LF);
    p = p * t + K(-3.516620491e-03LF);
    p = p * t + K(5.961470604e-01LF);
    p = p * t + K(-1.079547048e+00LF);
    p = p * t + K(7.920984030e-01LF);
    p = p * t + K(-7.859931886e-02LF);
    p = p * t + K(-2.713248432e-01LF);
    p = p * t + K(-9.228960262e-04LF);
    p = p * t + K(5.642345548e-01LF);
    p = p * t + K(-9.479242635e-07LF);
  }
  return p;
}

// erfc for x >= 0.75 (0 beyond 10.06, where it rounds to zero).
T nxv_erfc_tail(T x) {
  if (x >= K(10.06LF)) return K(0.0LF);
  return nxv_exp_negsq(x) * nxv_erfc_scaled(x);
}

// erf for |x| < 0.75: Taylor series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n + 1)) to n = 8.
T nxv_erf_small(T x) {
  T z = x * x;
  T p = K(1.646211437e-06LF);
  p = p * z + K(-1.492565036e-05LF);
  p = p * z + K(1.205533298e-04LF);
  p = p * z + K(-8.548327023e-04LF);
  p = p * z + K(5.223977625e-03LF);
  p = p * z + K(-2.686617065e-02LF);
  p = p * z + K(1.128379167e-01LF);
  p = p * z + K(-3.761263890e-01LF);
  p = p * z + K(1.128379167e+00LF);
  return x * p;
}

// erf: one polynomial chain per element (a GPU runs both sides of a per-element choice). Below
// 0.75 the Taylor polynomial above in z = x^2, times x; on [0.75, 3.92) erf itself, fitted in
// t = (x - 2.335) / 1.585 (degree 14, float Horner within 1.9 ulp); the chain starts with the
// fit's top six coefficients and takes the Taylor ones, picked per element, from degree 8.
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

T nxv_erfc(T x) {
  if (isnan(x)) return x;
  if (x >= K(0.75LF)) return nxv_erfc_tail(x);
  if (x > K(-0.75LF)) return K(1.0LF) - nxv_erf_small(x);
  return x <= K(-3.92LF) ? K(2.0LF) : K(2.0LF) - nxv_erfc_tail(-x);
}

// Inverse error function: Giles' estimate (nxv_real.glsl), within 3 ulp on its own (a Newton
// step on erf tripled the cost and did not lower the worst case of the tests).
T nxv_erf_inv(T x) {
  if (isnan(x) || abs(x) > K(1.0LF)) return nxv_nan(x);
  if (abs(x) == K(1.0LF)) return x / (x - x);  // +-inf (x / 0.0 may be folded)
  if (x == K(0.0LF)) return x;
  return nxv_erf_inv_giles(x);
}
