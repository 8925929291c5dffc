// fft and ifft of power-of-two rows longer than fft_pow2.comp holds in shared memory: the
// same radix-2 transform in double, a launch per pass through a buffer of complex doubles
// (the rows loaded bit-reversed, log2(n) stages of butterflies, the rows stored with Nx's
// eps zeroing). Defines: those of dft.comp, and PASS.
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
#include "fft_rows.glsl"

layout(buffer_reference, std430, buffer_reference_align = 16) buffer WorkBuf { dvec2 v[]; };

// PASS 0: rows of the input into the work buffer, bit-reversed; PASS 1: one stage of
// butterflies (span 2 * pc.half_span) over every row; PASS 2: the last stage (span n), its two
// results straight into the output.
void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  WorkBuf w = WorkBuf(pc.work_addr);
  uint n = prm.n, threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#if PASS == 1
  uint half_ = pc.half_span, stride = n / (2u * half_);
  for (uint p = gl_GlobalInvocationID.x; p < pc.count; p += threads) {
    uint row = p / (n / 2u), q = p % (n / 2u);
    uint k = q % half_, i0 = row * n + (q / half_) * 2u * half_ + k, i1 = i0 + half_;
    dvec2 tw = turn(k * stride, n);
    if (prm.inverse == 0u) tw.y = -tw.y;
    dvec2 u = w.v[i0], v = w.v[i1];
    v = dvec2(v.x * tw.x - v.y * tw.y, v.x * tw.y + v.y * tw.x);
    w.v[i0] = u + v;
    w.v[i1] = u - v;
  }
#elif PASS == 2
  uint half_ = n / 2u, step = fft_out_step(prm);
  for (uint p = gl_GlobalInvocationID.x; p < pc.count; p += threads) {
    uint row = p / half_, k = p % half_, i0 = row * n + k, in_base, out_base;
    fft_row_bases(prm, row, in_base, out_base);
    dvec2 tw = turn(k, n);
    if (prm.inverse == 0u) tw.y = -tw.y;
    dvec2 u = w.v[i0], v = w.v[i0 + half_];
    v = dvec2(v.x * tw.x - v.y * tw.y, v.x * tw.y + v.y * tw.x);
    OutBuf y = OutBuf(pc.out_addr);
    y.v[out_base + k * step] = OUT_STORE(fft_result(prm, u + v));
    y.v[out_base + (k + half_) * step] = OUT_STORE(fft_result(prm, u - v));
  }
#else
  uint bits = findMSB(n);
  for (uint e = gl_GlobalInvocationID.x; e < pc.count; e += threads) {
    uint row = e / n, j = e % n, in_base, out_base;
    fft_row_bases(prm, row, in_base, out_base);
    w.v[row * n + fft_bit_reversed(j, bits)] = fft_input(prm, InBuf(pc.in_addr), in_base, j);
  }
#endif
}
