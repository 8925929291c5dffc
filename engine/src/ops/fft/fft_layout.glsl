// Where a row of the radix-2 transforms starts in the input and in the row-major output, and
// the bit-reversed order rows are loaded in (fft_rows.glsl, fft_pow2_f32.comp).
#ifndef NXV_FFT_LAYOUT_GLSL
#define NXV_FFT_LAYOUT_GLSL

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

// Position of j in a row of n = 2^bits loaded in bit-reversed order.
uint fft_bit_reversed(uint j, uint bits) { return bits == 0u ? 0u : bitfieldReverse(j) >> (32u - bits); }

#endif
