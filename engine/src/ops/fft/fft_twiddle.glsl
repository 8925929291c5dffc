// The twiddles of the Fourier transforms (dft.comp, fft_pow2.comp), in double: (cos, sin) of a
// turn's fraction t / n, reduced exactly. t mod n stays an integer, its quadrant is taken by
// integer arithmetic, and the rest (at most pi/4) goes to short polynomials, so multiples of
// pi/4 come out exact and symmetric.
#ifndef NXV_FFT_TWIDDLE_GLSL
#define NXV_FFT_TWIDDLE_GLSL

// Taylor coefficients of (1 - cos a) / a^2 and (sin a - a) / a^3 in z = a^2, highest first
// (terms to a^18 and a^19: below 2^-60 for |a| <= pi/4).
const double kCosTerms[9] = double[9](1.0LF / 6402373705728000.0LF, -1.0LF / 20922789888000.0LF,
                                      1.0LF / 87178291200.0LF, -1.0LF / 479001600.0LF, 1.0LF / 3628800.0LF,
                                      -1.0LF / 40320.0LF, 1.0LF / 720.0LF, -1.0LF / 24.0LF, 0.5LF);
const double kSinTerms[9] = double[9](-1.0LF / 121645100408832000.0LF, 1.0LF / 355687428096000.0LF,
                                      -1.0LF / 1307674368000.0LF, 1.0LF / 6227020800.0LF, -1.0LF / 39916800.0LF,
                                      1.0LF / 362880.0LF, -1.0LF / 5040.0LF, 1.0LF / 120.0LF, -1.0LF / 6.0LF);

double horner9(const double c[9], double z) {
  double p = c[0];
  [[unroll]] for (int i = 1; i < 9; ++i) p = p * z + c[i];
  return p;
}

// cos and sin of a in [0, pi/4].
dvec2 cos_sin_reduced(double a) {
  double z = a * a;
  return dvec2(1.0LF - z * horner9(kCosTerms, z), a + a * z * horner9(kSinTerms, z));
}

// (cos, sin) of 2 pi t / n for 0 <= t < n.
dvec2 turn(uint t, uint n) {
  const double half_pi = 1.5707963267948966192LF;
  double dn = double(n), four_t = 4.0LF * double(t);
  // 4t = q n + r exactly (all below 2^34): quadrant q, then the angle r / n of a quarter turn.
  uint q = uint(floor(four_t / dn));
  double r = four_t - double(q) * dn;
  dvec2 cs;
  if (2.0LF * r <= dn) {
    cs = cos_sin_reduced(half_pi * (r / dn));
  } else {
    dvec2 m = cos_sin_reduced(half_pi * ((dn - r) / dn));
    cs = dvec2(m.y, m.x);
  }
  if (q == 1u) cs = dvec2(-cs.y, cs.x);
  else if (q == 2u) cs = -cs;
  else if (q == 3u) cs = dvec2(cs.y, -cs.x);
  return cs;
}

#endif
