// The twiddles of fft_pow2_f32.comp in float: (cos, sin) of a turn's fraction t / n for n a
// power of two. t's quadrant is taken by integer arithmetic and the rest of the angle (at most
// pi/4, r / n exactly since n is a power of two) goes to short polynomials: within about an
// ulp of float, multiples of pi/4 exact and symmetric, and no double arithmetic (devices
// without f64 run it).
#ifndef NXV_FFT_TWIDDLE_F32_GLSL
#define NXV_FFT_TWIDDLE_F32_GLSL

// cos and sin of a in [0, pi/4]: Taylor terms to a^10 and a^9 (the next below 2^-28).
vec2 fft_cos_sin_reduced_f32(float a) {
  float z = a * a;
  float c = 1.0 - z * (0.5 - z * (1.0 / 24.0 - z * (1.0 / 720.0 - z * (1.0 / 40320.0 - z * (1.0 / 3628800.0)))));
  float s = a - a * z * (1.0 / 6.0 - z * (1.0 / 120.0 - z * (1.0 / 5040.0 - z * (1.0 / 362880.0))));
  return vec2(c, s);
}

// (cos, sin) of 2 pi t / n, 0 <= t < n = 2^bits, bits < 30.
vec2 fft_turn_f32(uint t, uint bits) {
  const float half_pi = 1.57079632679489661923;
  uint n = 1u << bits, four_t = 4u * t, q = four_t >> bits, r = four_t & (n - 1u);  // 4t = q n + r
  float inv_n = 1.0 / float(n);                                                     // exact: a power of two
  vec2 cs;
  if (2u * r <= n) {
    cs = fft_cos_sin_reduced_f32(half_pi * (float(r) * inv_n));
  } else {
    vec2 m = fft_cos_sin_reduced_f32(half_pi * (float(n - r) * inv_n));
    cs = vec2(m.y, m.x);
  }
  if (q == 1u) cs = vec2(-cs.y, cs.x);
  else if (q == 2u) cs = -cs;
  else if (q == 3u) cs = vec2(cs.y, -cs.x);
  return cs;
}

#endif
