// fft and ifft of power-of-two length n (n >= 2, MAX_N at most): a workgroup per row (Nx pads
// with zeros or truncates to n) runs the radix-2 transform in shared memory, in double, with
// the twiddles of fft_twiddle.glsl. Components with |x| <= eps are stored as 0, as
// Nx.BinaryBackend does.
// Defines: those of dft.comp, and MAX_N, WG.
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

shared dvec2 buf[MAX_N];

void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  InBuf x = InBuf(pc.in_addr);
  OutBuf y = OutBuf(pc.out_addr);
  double eps = packDouble2x32(prm.eps);
  uint t = gl_LocalInvocationID.x, n = prm.n, bits = findMSB(n);
  uint step = prm.in_stride[prm.axis];
  uint out_step = 1u;  // the output is row-major: its stride along axis
  for (uint d = prm.axis + 1u; d < prm.rank; ++d) out_step *= prm.out_shape[d];
  for (uint row = gl_WorkGroupID.x; row < prm.rows; row += gl_NumWorkGroups.x) {
    // The row's first element in the input and in the output.
    uint rest = row, in_base = 0u, out_base = 0u, out_stride = 1u;
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
    // Loaded in bit-reversed order (zeros past the input's extent), then log2(n) stages of
    // butterflies, as the radix-2 recursion of Nx.BinaryBackend combines its halves.
    for (uint j = t; j < n; j += WG) {
      dvec2 v = dvec2(0.0LF);
      if (j < prm.len) {
#if IN_COMPLEX
        v = dvec2(x.v[in_base + j * step]);
#else
        v = dvec2(LOAD_IN(x.v[in_base + j * step]), 0.0LF);
#endif
      }
      buf[bitfieldReverse(j) >> (32u - bits)] = v;
    }
    barrier();
    for (uint half_ = 1u; half_ < n; half_ <<= 1u) {
      uint stride = n / (2u * half_);  // twiddle k of this stage is turn k * stride of n
      for (uint p = t; p < n / 2u; p += WG) {
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
    for (uint k = t; k < n; k += WG) {
      dvec2 v = buf[k];
      if (prm.inverse != 0u) v /= double(n);
      if (abs(v.x) <= eps) v.x = 0.0LF;
      if (abs(v.y) <= eps) v.y = 0.0LF;
      y.v[out_base + k * out_step] = OUT_STORE(v);
    }
    barrier();  // the next row writes buf again
  }
}
