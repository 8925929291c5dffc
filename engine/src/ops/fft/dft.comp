// fft and ifft as a direct discrete Fourier transform: each output element X[k] of a row sums
// x[j] exp(-+2 pi i jk / n) over the row's first min(extent, n) inputs (Nx pads with zeros
// or truncates to n), in double, jk mod n kept as an integer for the twiddle (fft_twiddle.glsl).
// Components with |x| <= eps are stored as 0, as Nx.BinaryBackend does.
// Defines: IN_COMPLEX; IN_STORE, IN_ALIGN (vec2 or dvec2 where complex, else the real storage
// type and LOAD_IN(x), its value as a double); OUT_STORE (vec2 or dvec2), OUT_ALIGN.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#if NXV_STORAGE8
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if NXV_STORAGE16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if NXV_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "fft_push.h"
layout(push_constant, std430) uniform Push { FftPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ParamsRef { FftParams p; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

#include "fft_twiddle.glsl"

void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  InBuf x = InBuf(pc.in_addr);
  OutBuf y = OutBuf(pc.out_addr);
  double eps = packDouble2x32(prm.eps);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint step = prm.in_stride[prm.axis];
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += threads) {
    uint rest = pc.start + i, base = 0u, k = 0u;
    for (int d = int(prm.rank) - 1; d >= 0; --d) {
      uint c = rest % prm.out_shape[d];
      rest /= prm.out_shape[d];
      if (uint(d) == prm.axis) k = c;
      else base += c * prm.in_stride[d];
    }
    dvec2 acc = dvec2(0.0LF);
    uint t = 0u;  // j k mod n
    for (uint j = 0u; j < prm.len; ++j) {
#if IN_COMPLEX
      dvec2 v = dvec2(x.v[base + j * step]);
#else
      dvec2 v = dvec2(LOAD_IN(x.v[base + j * step]), 0.0LF);
#endif
      dvec2 w = turn(t, prm.n);
      if (prm.inverse == 0u) w.y = -w.y;
      acc += dvec2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
      t += k;
      if (t >= prm.n) t -= prm.n;
    }
    if (prm.inverse != 0u) acc /= double(prm.n);
    if (abs(acc.x) <= eps) acc.x = 0.0LF;
    if (abs(acc.y) <= eps) acc.y = 0.0LF;
    y.v[i + pc.start] = OUT_STORE(acc);
  }
}
