// Window reductions (window_sum/product/max/min): each invocation folds one output's window,
// padding included (padding holds the fold's identity, Nx's padding value), in the window's
// row-major order as Nx.BinaryBackend folds it: acc = COMBINE(element, acc) from IDENT.
// Windows wholly inside the tensor skip the bounds checks. With VW > 1 (stride and dilation 1
// along the last axis) an invocation computes VW neighbouring outputs along that axis and
// loads each row of the window once for all of them. Defines: NR (axes), WINS (the window's
// extent per axis, NR values), WSIZE (their product), VW, IN_STORE/OUT_STORE (+ _ALIGN), ACC,
// IDENT, LOAD(x), COMBINE(a, b), STORE_OUT(v); structs in window_push.h. window_reduce/6:
// INIT_FROM_BUFFER (IDENT is the accumulator read from init_addr), COMBINE its traced function.
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
#ifdef NXV_GENERATED
#include "nxv_generated.glsl"  // the combiner of window_reduce/6 (ops/reduce/combiner.cpp)
#endif
#include "window_push.h"

layout(push_constant, std430) uniform Params { WindowPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer ParamBuf { WindowParams p; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
#ifdef VEC_STORE
layout(buffer_reference, std430, buffer_reference_align = OUT_VALIGN) writeonly buffer OutBuf4 { OUT_VEC v[]; };
#endif
#ifdef INIT_FROM_BUFFER
layout(buffer_reference, std430, buffer_reference_align = INIT_ALIGN) readonly buffer InitBuf { INIT_STORE v[]; };
#endif

const int WIN[NR] = int[NR](WINS);
#ifndef VH
#define VH 1
#endif
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
#ifdef NXV_KERNEL_INIT
  NXV_KERNEL_INIT();  // tables of a combiner's step (nxv_pow_f32.glsl), before any element
#endif
#ifdef INIT_FROM_BUFFER
  ACC init_value = LOAD(InitBuf(pc.init_addr).v[0]);  // window_reduce's accumulator (IDENT)
#endif
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
#if VH > 1
  // Blocks of VH x VW outputs over the last two axes (stride and dilation 1 on both; max and
  // min only, whose order does not matter): each input row of the block's windows is loaded
  // once, its maxima over the last axis's window folded once, and given to the VH output rows
  // whose windows take it.
  const int WL = WIN[NR - 1], WH = WIN[NR - 2];
  const uint WOUTER2 = WSIZE / uint(WL * WH);  // window elements over the axes before those two
  for (uint q = gl_GlobalInvocationID.x; q < pc.n; q += threads) {
    uint brow = q / pc.last_runs;
    uint first = (q - brow * pc.last_runs) * VW;
    uint outer = brow / pc.pen_blocks;
    uint y0 = (brow - outer * pc.pen_blocks) * VH;
    uint rest = (outer * pc.pen_extent + y0) * pc.last_extent + first;
    int base = 0;
    bool interior = first + VW <= pc.last_extent && y0 + VH <= pc.pen_extent;
    int x0[NR];
    [[unroll]] for (int d = NR - 1; d >= 0; --d) {
      uint qd = nxv_fastdiv(rest, magic[d], shift[d]);
      int c = int(rest - qd * shape[d]);
      rest = qd;
      x0[d] = c * stride[d] - lo[d];
      base += x0[d] * in_stride[d];
      int span = d == NR - 1 ? VW - 1 + WL - 1 : d == NR - 2 ? VH - 1 + WH - 1 : (WIN[d] - 1) * dil[d];
      interior = interior && x0[d] >= 0 && x0[d] + span < in_shape[d];
    }
    ACC acc[VH][VW];
    [[unroll]] for (int y = 0; y < VH; ++y)
      [[unroll]] for (int i = 0; i < VW; ++i) acc[y][i] = IDENT;
    WINDOW_LOOP for (uint k = 0u; k < WOUTER2; ++k) {
      int off = base;
      bool outer_valid = true;
      [[unroll]] for (int d = 0; d < NR - 2; ++d) {
        int step = window_coord(k * uint(WL * WH), d) * dil[d];
        outer_valid = outer_valid && x0[d] + step >= 0 && x0[d] + step < in_shape[d];
        off += step * in_stride[d];
      }
      [[unroll]] for (int rr = 0; rr < VH + WH - 1; ++rr) {
        int yy = x0[NR - 2] + rr;
        bool row_valid = outer_valid && yy >= 0 && yy < in_shape[NR - 2];
        int roff = off + rr * in_stride[NR - 2];
        ACC seg[VW + WL - 1];
        [[unroll]] for (int t = 0; t < VW + WL - 1; ++t) {
          int x = x0[NR - 1] + t;
          seg[t] = IDENT;
          if (interior || (row_valid && x >= 0 && x < in_shape[NR - 1])) seg[t] = LOAD(src.v[roff + t * in_stride[NR - 1]]);
        }
        ACC h[VW];
        [[unroll]] for (int i = 0; i < VW; ++i) {
          h[i] = seg[i];
          [[unroll]] for (int t = 1; t < WL; ++t) h[i] = COMBINE(seg[i + t], h[i]);
        }
        [[unroll]] for (int y = 0; y < VH; ++y) {
          int wr = rr - y;  // the window row this input row is for output row y
          if (wr >= 0 && wr < WH)
            [[unroll]] for (int i = 0; i < VW; ++i) acc[y][i] = COMBINE(h[i], acc[y][i]);
        }
      }
    }
    [[unroll]] for (int y = 0; y < VH; ++y) {
      uint o = (outer * pc.pen_extent + y0 + uint(y)) * pc.last_extent + first;
#ifdef VEC_STORE
      // The result's rows hold a multiple of 4 outputs: every run is whole and 4-aligned.
      if (y0 + uint(y) < pc.pen_extent)
        OutBuf4(pc.out_addr).v[o / 4u] =
            OUT_VEC(STORE_OUT(acc[y][0]), STORE_OUT(acc[y][1]), STORE_OUT(acc[y][2]), STORE_OUT(acc[y][3]));
#else
      [[unroll]] for (int i = 0; i < VW; ++i)
        if (y0 + uint(y) < pc.pen_extent && first + uint(i) < pc.last_extent) dst.v[o + uint(i)] = STORE_OUT(acc[y][i]);
#endif
    }
  }
#elif VW > 1
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
