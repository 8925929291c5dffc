// Window reductions (window_sum/product/max/min): each invocation folds one output's window,
// padding included (padding holds the fold's identity, Nx's padding value), in the window's
// row-major order as Nx.BinaryBackend folds it: acc = COMBINE(element, acc) from IDENT.
// Defines: NA (axes where the window is wider than one element, looped with registers),
// IN_STORE/OUT_STORE (+ _ALIGN), ACC, IDENT, LOAD(x), COMBINE(a, b), STORE_OUT(v); structs
// in window_push.h.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
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
#include "window_push.h"

layout(push_constant, std430) uniform Params { WindowPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ParamBuf { WindowParams p; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  uint rank = P.p.rank;
  uint size = P.p.window_size;
#if NA > 0
  int in_shape[NA], in_stride[NA], dil[NA], win[NA];
  [[unroll]] for (int j = 0; j < NA; ++j) {
    in_shape[j] = int(P.p.in_shape[j]);
    in_stride[j] = P.p.in_stride[j];
    dil[j] = int(P.p.dilation[j]);
    win[j] = int(P.p.window[j]);
  }
#endif
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint o = gl_GlobalInvocationID.x; o < pc.n; o += threads) {
    int base = 0;
    bool inside = true;
    for (uint d = NA; d < rank; ++d) {
      int x = int((o / P.p.out_pitch[d]) % P.p.out_shape[d] * P.p.stride[d]) - P.p.pad_lo[d];
      inside = inside && x >= 0 && x < int(P.p.in_shape[d]);
      base += x * P.p.in_stride[d];
    }
    ACC acc = IDENT;
#if NA > 0
    int x[NA], k[NA];
    [[unroll]] for (int j = 0; j < NA; ++j) {
      x[j] = int((o / P.p.out_pitch[j]) % P.p.out_shape[j] * P.p.stride[j]) - P.p.pad_lo[j];
      k[j] = 0;
      base += x[j] * in_stride[j];
    }
    int off = base;
    for (uint w = 0u; w < size; ++w) {
      bool valid = inside;
      [[unroll]] for (int j = 0; j < NA; ++j) valid = valid && x[j] >= 0 && x[j] < in_shape[j];
      ACC v = IDENT;
      if (valid) v = LOAD(src.v[off]);
      acc = COMBINE(v, acc);
      // Next element: the last active axis moves fastest.
      [[unroll]] for (int j = NA - 1; j >= 0; --j) {
        k[j] += 1;
        x[j] += dil[j];
        off += dil[j] * in_stride[j];
        if (k[j] < win[j]) break;
        k[j] = 0;
        x[j] -= win[j] * dil[j];
        off -= win[j] * dil[j] * in_stride[j];
      }
    }
#else
    ACC v = IDENT;
    if (inside) v = LOAD(src.v[base]);
    acc = COMBINE(v, acc);
#endif
    dst.v[o] = STORE_OUT(acc);
  }
}
