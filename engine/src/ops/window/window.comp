// Window reductions (window_sum/product/max/min): each invocation folds one output's window,
// padding included (padding holds the fold's identity, Nx's padding value), in the window's
// row-major order as Nx.BinaryBackend folds it: acc = COMBINE(element, acc) from IDENT.
// Windows wholly inside the tensor skip the bounds checks. With VW > 1 (stride and dilation 1
// along the last axis) an invocation computes VW neighbouring outputs along that axis and
// loads each row of the window once for all of them. Defines: NR (axes), WINS (the window's
// extent per axis, NR values), WSIZE (their product), VW, IN_STORE/OUT_STORE (+ _ALIGN), ACC,
// IDENT, LOAD(x), COMBINE(a, b), STORE_OUT(v); structs in window_push.h.
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

#include "nxv_fastdiv.glsl"

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
#if VW > 1
  const int WL = WIN[NR - 1];
  const uint WOUTER = WSIZE / WL;  // window elements over the axes before the last
  for (uint q = gl_GlobalInvocationID.x; q < pc.n; q += threads) {
    uint row = q / pc.last_runs;
    uint first = (q - row * pc.last_runs) * VW;
    uint rest = row * pc.last_extent + first;
    int base = 0;
    bool interior = first + VW <= pc.last_extent;
    int x0[NR];
    [[unroll]] for (int d = NR - 1; d >= 0; --d) {
      uint qd = nxv_fastdiv(rest, magic[d], shift[d]);
      int c = int(rest - qd * shape[d]);
      rest = qd;
      x0[d] = c * stride[d] - lo[d];
      base += x0[d] * in_stride[d];
      int span = d == NR - 1 ? VW - 1 + WL - 1 : (WIN[d] - 1) * dil[d];
      interior = interior && x0[d] >= 0 && x0[d] + span < in_shape[d];
    }
    ACC acc[VW];
    [[unroll]] for (int i = 0; i < VW; ++i) acc[i] = IDENT;
    WINDOW_LOOP for (uint k = 0u; k < WOUTER; ++k) {
      int off = base;
      bool row_valid = true;
      [[unroll]] for (int d = 0; d < NR - 1; ++d) {
        int step = window_coord(k * uint(WL), d) * dil[d];
        row_valid = row_valid && x0[d] + step >= 0 && x0[d] + step < in_shape[d];
        off += step * in_stride[d];
      }
      ACC seg[VW + WL - 1];
      [[unroll]] for (int t = 0; t < VW + WL - 1; ++t) {
        int x = x0[NR - 1] + t;
        seg[t] = IDENT;
        if (interior || (row_valid && x >= 0 && x < in_shape[NR - 1])) seg[t] = LOAD(src.v[off + t * in_stride[NR - 1]]);
      }
      [[unroll]] for (int i = 0; i < VW; ++i)
        [[unroll]] for (int t = 0; t < WL; ++t) acc[i] = COMBINE(seg[i + t], acc[i]);
    }
    uint o = row * pc.last_extent + first;
    [[unroll]] for (int i = 0; i < VW; ++i)
      if (first + uint(i) < pc.last_extent) dst.v[o + uint(i)] = STORE_OUT(acc[i]);
  }
#else
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
#endif
}
