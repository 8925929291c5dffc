// fft and ifft of power-of-two length n (n >= 2, MAX_N at most): a workgroup per row (Nx pads
// with zeros or truncates to n) runs the radix-2 transform in shared memory, in double, with
// the twiddles of fft_twiddle.glsl. Components with |x| <= eps are stored as 0, as
// Nx.BinaryBackend does.
// BLOCKS (rows longer than MAX_N, with fft_global.comp): a workgroup per block of MAX_N of a
// row's bit-reversed order instead: the transform's first log2(MAX_N) stages stay inside such
// blocks, so they run here, and the block goes to the work buffer for the global stages.
// Defines: those of dft.comp, and MAX_N, WG, BLOCKS.
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

shared dvec2 buf[MAX_N];
#ifndef BLOCKS
#define BLOCKS 0
#endif
#if BLOCKS
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer WorkBuf { dvec2 v[]; };
#endif

void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  InBuf x = InBuf(pc.in_addr);
  OutBuf y = OutBuf(pc.out_addr);
  uint t = gl_LocalInvocationID.x, n = prm.n, bits = findMSB(n);
  uint out_step = fft_out_step(prm);
  // m: the length transformed in shared memory (a block of the row, or all of it).
  uint m = BLOCKS != 0 ? MAX_N : n, blocks = n / m;
  for (uint unit = gl_WorkGroupID.x; unit < prm.rows * blocks; unit += gl_NumWorkGroups.x) {
    uint row = unit / blocks, block = unit % blocks, in_base, out_base;
    fft_row_bases(prm, row, in_base, out_base);
    // Loaded in bit-reversed order (zeros past the input's extent), then log2(m) stages of
    // butterflies, as the radix-2 recursion of Nx.BinaryBackend combines its halves.
#if BLOCKS
    for (uint j = t; j < m; j += WG) buf[j] = fft_input(prm, x, in_base, fft_bit_reversed(block * m + j, bits));
#else
    for (uint j = t; j < n; j += WG) buf[fft_bit_reversed(j, bits)] = fft_input(prm, x, in_base, j);
#endif
    barrier();
    for (uint half_ = 1u; half_ < m; half_ <<= 1u) {
      uint stride = n / (2u * half_);  // twiddle k of this stage is turn k * stride of n
      for (uint p = t; p < m / 2u; p += WG) {
        uint k = p % half_, i0 = (p / half_) * 2u * half_ + k, i1 = i0 + half_;
        dvec2 w = turn(k * stride, n);
        if (prm.inverse == 0u) w.y = -w.y;
        dvec2 u = buf[i0], v = buf[i1];
        v = dvec2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
        buf[i0] = u + v;
        buf[i1] = u - v;
      }
      barrier();
    }
#if BLOCKS
    for (uint k = t; k < m; k += WG) WorkBuf(pc.work_addr).v[row * n + block * m + k] = buf[k];
#else
    for (uint k = t; k < n; k += WG) y.v[out_base + k * out_step] = OUT_STORE(fft_result(prm, buf[k]));
#endif
    barrier();  // the next row writes buf again
  }
}
