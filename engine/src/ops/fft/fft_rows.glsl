// Rows of the radix-2 transforms (fft_pow2.comp, fft_global.comp): where a row starts in the
// input and in the row-major output, an input element as a complex double, and an output
// element as Nx stores it. Included after the InBuf declaration.
#ifndef NXV_FFT_ROWS_GLSL
#define NXV_FFT_ROWS_GLSL

// Row `row` counts the output's rows along axis, row-major over the other axes.
void fft_row_bases(FftParams prm, uint row, out uint in_base, out uint out_base) {
  uint rest = row, out_stride = 1u;
  in_base = 0u, out_base = 0u;
  for (int d = int(prm.rank) - 1; d >= 0; --d) {
    uint extent = prm.out_shape[d];
    if (uint(d) != prm.axis) {
      uint c = rest % extent;
      rest /= extent;
      in_base += c * prm.in_stride[d];
      out_base += c * out_stride;
    }
    out_stride *= extent;
  }
}

// The output's stride along axis.
uint fft_out_step(FftParams prm) {
  uint step = 1u;
  for (uint d = prm.axis + 1u; d < prm.rank; ++d) step *= prm.out_shape[d];
  return step;
}

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

// Position of j in a row of n = 2^bits loaded in bit-reversed order.
uint fft_bit_reversed(uint j, uint bits) { return bits == 0u ? 0u : bitfieldReverse(j) >> (32u - bits); }

#endif
