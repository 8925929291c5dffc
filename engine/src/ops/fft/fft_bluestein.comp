// fft and ifft of rows of any length n by Bluestein's algorithm, in double: with the chirp
// c[t] = exp(-+ pi i t^2 / n), X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j]), a convolution
// that power-of-two transforms of length m >= 2n - 1 compute (fft_global.comp's butterfly
// passes, in natural order from bit-reversed rows). The work buffer holds rows + 1 + rows rows
// of m complex doubles: the rows' a = x c, the filter b = conj(c) (wrapped mod m), then the
// products of their transforms. Defines: those of dft.comp, and PASS:
// 0: a and b into their rows, bit-reversed; 2: the forward transforms' last stage, then each a
// row's transform times b's, bit-reversed into its product row; 3: the inverse transform's last
// stage, then X[k] = c[k] * (its result)[k] / m, stored with Nx's eps zeroing. pc.half_span is m.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if NXV_STORAGE8
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if NXV_STORAGE16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "fft_push.h"
layout(push_constant, std430) uniform Push { FftPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ParamsRef { FftParams p; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer WorkBuf { dvec2 v[]; };

#include "fft_twiddle.glsl"
#include "fft_rows.glsl"

// c[t]: t^2 mod 2n kept as an integer, so the angle is exact however long the row.
dvec2 chirp(FftParams prm, uint t) {
  uint two_n = 2u * prm.n;
  dvec2 w = turn(uint((uint64_t(t) * uint64_t(t)) % uint64_t(two_n)), two_n);
  if (prm.inverse == 0u) w.y = -w.y;
  return w;
}

dvec2 cmul(dvec2 a, dvec2 b) { return dvec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// The last radix-2 stage at k of the row starting at `base`: (u + w v, u - w v), w the k-th
// turn of m (conjugate for the forward transform).
void last_stage(WorkBuf w, uint base, uint k, uint m, bool inverse, out dvec2 lo, out dvec2 hi) {
  dvec2 tw = turn(k, m);
  if (!inverse) tw.y = -tw.y;
  dvec2 u = w.v[base + k], v = cmul(w.v[base + k + m / 2u], tw);
  lo = u + v, hi = u - v;
}

void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  WorkBuf w = WorkBuf(pc.work_addr);
  uint n = prm.n, m = pc.half_span, bits = findMSB(m), threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < pc.count; e += threads) {
#if PASS == 0
    uint row = e / m, j = e % m;
    dvec2 v = dvec2(0.0LF);
    if (row < prm.rows) {
      uint in_base, out_base;
      fft_row_bases(prm, row, in_base, out_base);
      if (j < n) v = cmul(fft_input(prm, InBuf(pc.in_addr), in_base, j), chirp(prm, j));
    } else {
      uint t = j < n ? j : m - j;  // b[-t] = b[t]: the negative lags wrap to the row's end
      if (j < n || j > m - n) v = chirp(prm, t) * dvec2(1.0LF, -1.0LF);
    }
    w.v[row * m + fft_bit_reversed(j, bits)] = v;
#elif PASS == 2
    uint row = e / (m / 2u), k = e % (m / 2u), product = (prm.rows + 1u + row) * m;
    dvec2 a0, a1, b0, b1;
    last_stage(w, row * m, k, m, false, a0, a1);
    last_stage(w, prm.rows * m, k, m, false, b0, b1);
    w.v[product + fft_bit_reversed(k, bits)] = cmul(a0, b0);
    w.v[product + fft_bit_reversed(k + m / 2u, bits)] = cmul(a1, b1);
#else
    // n <= m / 2: X[k] needs only the first half of the inverse transform's last stage.
    uint row = e / n, k = e % n, in_base, out_base;
    fft_row_bases(prm, row, in_base, out_base);
    dvec2 lo, hi;
    last_stage(w, (prm.rows + 1u + row) * m, k, m, true, lo, hi);
    dvec2 v = cmul(lo / double(m), chirp(prm, k));
    OutBuf(pc.out_addr).v[out_base + k * fft_out_step(prm)] = OUT_STORE(fft_result(prm, v));
#endif
  }
}
