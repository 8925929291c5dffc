// The twiddles of the Fourier transforms (dft.comp, fft_pow2.comp), in double: (cos, sin) of a
// turn's fraction t / n, reduced exactly. t mod n stays an integer, its quadrant is taken by
// integer arithmetic, and the rest (at most pi/4) goes to short polynomials, so multiples of
// pi/4 come out exact and symmetric.
#ifndef NXV_FFT_TWIDDLE_GLSL
#define NXV_FFT_TWIDDLE_GLSL

// cos and sin of a in [0, pi/4] (Taylor terms to a^18 and a^19: below 2^-60 there).
dvec2 cos_sin_reduced(double a) {
  double z = a * a;
  double c = 1.0LF / 6402373705728000.0LF;  // 1 / 18!
  c = c * z - 1.0LF / 20922789888000.0LF;
  c = c * z + 1.0LF / 87178291200.0LF;
  c = c * z - 1.0LF / 479001600.0LF;
  c = c * z + 1.0LF / 3628800.0LF;
  c = c * z - 1.0LF / 40320.0LF;
  c = c * z + 1.0LF / 720.0LF;
  c = c * z - 1.0LF / 24.0LF;
  c = c * z + 0.5LF;
  double s = -1.0LF / 121645100408832000.0LF;  // -1 / 19!
  s = s * z + 1.0LF / 355687428096000.0LF;
  s = s * z - 1.0LF / 1307674368000.0LF;
  s = s * z + 1.0LF / 6227020800.0LF;
  s = s * z - 1.0LF / 39916800.0LF;
  s = s * z + 1.0LF / 362880.0LF;
  s = s * z - 1.0LF / 5040.0LF;
  s = s * z + 1.0LF / 120.0LF;
  s = s * z - 1.0LF / 6.0LF;
  return dvec2(1.0LF - z * c, a + a * z * s);
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
