// Rows of the radix-2 transforms in double (fft_pow2.comp, fft_global.comp): an input element
// as a complex double, and an output element as Nx stores it. Included after the InBuf
// declaration.
#ifndef NXV_FFT_ROWS_GLSL
#define NXV_FFT_ROWS_GLSL

#include "fft_layout.glsl"

// Element j of a row starting at `base`: zero past the input's extent (Nx's padding).
dvec2 fft_input(FftParams prm, InBuf x, uint base, uint j) {
  if (j >= prm.len) return dvec2(0.0LF);
#if IN_COMPLEX
  return dvec2(x.v[base + j * prm.in_stride[prm.axis]]);
#else
  return dvec2(LOAD_IN(x.v[base + j * prm.in_stride[prm.axis]]), 0.0LF);
#endif
}

// A transformed value as stored: divided by n for ifft, components within eps zeroed.
dvec2 fft_result(FftParams prm, dvec2 v) {
  double eps = packDouble2x32(prm.eps);
  if (prm.inverse != 0u) v /= double(prm.n);
  if (abs(v.x) <= eps) v.x = 0.0LF;
  if (abs(v.y) <= eps) v.y = 0.0LF;
  return v;
}

#endif
