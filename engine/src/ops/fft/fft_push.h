// Push constants and parameter block of the Fourier transforms (ops/fft/fft.cpp): dft.comp
// (each output element sums its row of the input against the twiddles) and fft_pow2.comp (a
// workgroup transforms a row of power-of-two length in shared memory) and fft_global.comp (the
// same transform for longer rows, a launch per stage through a buffer of complex doubles);
// fft_pow2_f32.comp: c64 rows in shared memory in float.
#ifndef NXV_FFT_PUSH_H
#define NXV_FFT_PUSH_H
#include "nxv_shared.h"

#define NXV_FFT_MAX_RANK 8

NXV_STRUCT(FftParams) {
  NXV_U32 out_shape[NXV_FFT_MAX_RANK];
  NXV_U32 in_stride[NXV_FFT_MAX_RANK];  // in elements; the transformed axis's too
  NXV_U32 rank;
  NXV_U32 axis;
  NXV_U32 n;        // the transform's length (the output's extent along axis)
  NXV_U32 len;      // input elements of a row that take part: min(input extent, n)
  NXV_U32 inverse;  // 1: ifft (exp(+2 pi i jk / n), divided by n)
  NXV_U32 rows;     // fft_pow2.comp: rows to transform (output elements / n)
  NXV_U64 eps;      // the bits of a double: components with |x| <= eps are stored as 0
  NXV_U32 eps32;    // the bits of the largest float <= eps (fft_pow2_f32.comp's same test)
  // fft_pow2_f32.comp as the first pass of a long row's two (rows of N = 2^twiddle_bits as
  // n x (N / n)): each result k1 of row r is multiplied by w_N^(k1 j2), j2 = (r / twiddle_inner)
  // mod twiddle_count. 0: no twiddles.
  NXV_U32 twiddle_bits;
  NXV_U32 twiddle_inner;
  NXV_U32 twiddle_count;
  NXV_U32 pad0;
};

NXV_STRUCT(FftPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_ADDR params_addr;  // FftParams
  NXV_ADDR work_addr;    // fft_global.comp: the rows being transformed (complex doubles)
  NXV_U32 count;         // output elements of this launch
  NXV_U32 start;         // linear index of its first one
  NXV_U32 half_span;     // fft_global.comp's butterfly passes: half the span of this stage
  NXV_U32 pad;
};

#endif
