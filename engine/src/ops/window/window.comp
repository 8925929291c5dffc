// Window reductions (window_sum/product/max/min): each invocation folds one output's window,
// padding included (padding holds the fold's identity, Nx's padding value), in the window's
// row-major order as Nx.BinaryBackend folds it: acc = COMBINE(element, acc) from IDENT.
// Windows wholly inside the tensor skip the bounds checks. Defines: NR (axes), WINS (the
// window's extent per axis, NR values), WSIZE (their product), IN_STORE/OUT_STORE (+ _ALIGN),
// ACC, IDENT, LOAD(x), COMBINE(a, b), STORE_OUT(v); structs in window_push.h.
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

const int WIN[NR] = int[NR](WINS);
// Small windows unroll into straight-line loads; large ones loop.
#if WSIZE <= 64
#define WINDOW_LOOP [[unroll]]
#else
#define WINDOW_LOOP [[dont_unroll]]
#endif

uint nxv_fastdiv(uint n, uint magic, uint shift) {
  uint hi, lo;
  umulExtended(n, magic, hi, lo);
  return (hi + n) >> shift;
}

// The k-th element of the window (row-major) along axis d, a compile-time constant once the
// window loop is unrolled.
int window_coord(uint k, int d) {
  uint pitch = 1u;
  for (int e = NR - 1; e > d; --e) pitch *= uint(WIN[e]);
  return int((k / pitch) % uint(WIN[d]));
}

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  uint shape[NR], magic[NR], shift[NR];
  int in_shape[NR], in_stride[NR], stride[NR], lo[NR], dil[NR];
  [[unroll]] for (int d = 0; d < NR; ++d) {
    shape[d] = P.p.out_shape[d];
    magic[d] = P.p.out_magic[d];
    shift[d] = P.p.out_shift[d];
    in_shape[d] = int(P.p.in_shape[d]);
    in_stride[d] = P.p.in_stride[d];
    stride[d] = int(P.p.stride[d]);
    lo[d] = P.p.pad_lo[d];
    dil[d] = P.p.dilation[d];
  }
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint o = gl_GlobalInvocationID.x; o < pc.n; o += threads) {
    uint rest = o;
    int base = 0;
    bool interior = true;
    int x0[NR];
    [[unroll]] for (int d = NR - 1; d >= 0; --d) {
      uint q = nxv_fastdiv(rest, magic[d], shift[d]);
      int c = int(rest - q * shape[d]);
      rest = q;
      x0[d] = c * stride[d] - lo[d];
      base += x0[d] * in_stride[d];
      interior = interior && x0[d] >= 0 && x0[d] + (WIN[d] - 1) * dil[d] < in_shape[d];
    }
    ACC acc = IDENT;
    if (interior) {
      WINDOW_LOOP for (uint k = 0u; k < WSIZE; ++k) {
        int off = base;
        [[unroll]] for (int d = 0; d < NR; ++d) off += window_coord(k, d) * dil[d] * in_stride[d];
        ACC v = LOAD(src.v[off]);
        acc = COMBINE(v, acc);
      }
    } else {
      WINDOW_LOOP for (uint k = 0u; k < WSIZE; ++k) {
        int off = base;
        bool valid = true;
        [[unroll]] for (int d = 0; d < NR; ++d) {
          int step = window_coord(k, d) * dil[d];
          int x = x0[d] + step;
          valid = valid && x >= 0 && x < in_shape[d];
          off += step * in_stride[d];
        }
        ACC v = IDENT;
        if (valid) v = LOAD(src.v[off]);
        acc = COMBINE(v, acc);
      }
    }
    dst.v[o] = STORE_OUT(acc);
  }
}
