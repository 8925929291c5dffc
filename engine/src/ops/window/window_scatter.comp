// window_scatter_max/min (the gradient of max/min pooling), as a gather: each invocation owns
// one position of the (unpadded) tensor, visits the windows that contain it in row-major
// order, finds each one's selected element as Nx.BinaryBackend does (the window's first
// element, then every later one that is >= (max) or <= (min) the current pick; padding holds
// the init value), and adds that window's source value when the pick is its own position:
// out = init + source values in window order, no atomics, the same bits every run.
// Defines: NA (axes where the window is wider than one element), T_STORE/T_ALIGN/LOAD_T(x)
// (the tensor, compared in its compute type TC, with INIT_T(x) the init value in it),
// SRC_STORE/SRC_ALIGN, INIT_STORE/INIT_ALIGN, ACC, LOAD_SRC(x), LOAD_INIT(x), OUT_STORE/
// OUT_ALIGN/STORE_OUT(v), SELECT(x, pick) (x replaces the pick).
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
layout(buffer_reference, std430, buffer_reference_align = T_ALIGN) readonly buffer TBuf { T_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = SRC_ALIGN) readonly buffer SrcBuf { SRC_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = INIT_ALIGN) readonly buffer InitBuf { INIT_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  TBuf t = TBuf(pc.in_addr);
  SrcBuf source = SrcBuf(pc.source_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  InitBuf init_buf = InitBuf(pc.init_addr);
  ACC init = LOAD_INIT(init_buf.v[0]);
  TC pad = INIT_T(init_buf.v[0]);
  uint rank = P.p.rank;
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  // Per axis, out_shape is the tensor's (the output's), in_shape the number of windows, in_stride
  // the tensor's element stride; out_pitch the output's pitch, src_pitch the source's, and
  // window[]/stride[]/pad_lo[] the window's.
  for (uint o = gl_GlobalInvocationID.x; o < pc.n; o += threads) {
    ACC acc = init;
    // Fixed axes (window of one): the one window holding this position, if any.
    bool any_window = true;
    uint src_fixed = 0u;
    int self_fixed = 0;
    for (int d = int(rank) - 1; d >= NA; --d) {
      int c = int((o / P.p.out_pitch[d]) % P.p.out_shape[d]);
      int padded = c + P.p.pad_lo[d];
      int s = int(P.p.stride[d]);
      int w = padded / s;
      any_window = any_window && padded >= 0 && padded % s == 0 && w < int(P.p.in_shape[d]);
      src_fixed += uint(w) * P.p.src_pitch[d];
      self_fixed += c * P.p.in_stride[d];
    }
#if NA > 0
    int c[NA], wlo[NA], whi[NA], w[NA];
    [[unroll]] for (int j = 0; j < NA; ++j) {
      c[j] = int((o / P.p.out_pitch[j]) % P.p.out_shape[j]);
      int padded = c[j] + P.p.pad_lo[j];
      int s = int(P.p.stride[j]), wn = int(P.p.window[j]);
      wlo[j] = max(0, (padded - wn + s) / s);  // ceil((padded - wn + 1) / s), padded - wn + s >= 0 when it counts
      if (padded - wn + 1 < 0) wlo[j] = 0;
      whi[j] = min(int(P.p.in_shape[j]) - 1, padded < 0 ? -1 : padded / s);
      any_window = any_window && wlo[j] <= whi[j];
      w[j] = wlo[j];
    }
    int self_base = self_fixed;
    [[unroll]] for (int j = 0; j < NA; ++j) self_base += c[j] * P.p.in_stride[j];
    while (any_window) {
      // The window w: scan its elements in row-major order.
      int k[NA], e[NA];
      int off = self_fixed;
      [[unroll]] for (int j = 0; j < NA; ++j) {
        k[j] = 0;
        e[j] = w[j] * int(P.p.stride[j]) - P.p.pad_lo[j];
        off += e[j] * P.p.in_stride[j];
      }
      TC pick = pad;
      int pick_off = -1;
      bool first = true;
      for (uint n = 0u; n < P.p.window_size; ++n) {
        bool valid = true;
        [[unroll]] for (int j = 0; j < NA; ++j) valid = valid && e[j] >= 0 && e[j] < int(P.p.out_shape[j]);
        TC x = pad;
        if (valid) x = LOAD_T(t.v[off]);
        if (first || SELECT(x, pick)) {
          pick = x;
          pick_off = valid ? off : -1;
        }
        first = false;
        [[unroll]] for (int j = NA - 1; j >= 0; --j) {
          k[j] += 1;
          e[j] += 1;
          off += P.p.in_stride[j];
          if (k[j] < int(P.p.window[j])) break;
          k[j] = 0;
          e[j] -= int(P.p.window[j]);
          off -= int(P.p.window[j]) * P.p.in_stride[j];
        }
      }
      if (pick_off == self_base) {
        uint si = src_fixed;
        [[unroll]] for (int j = 0; j < NA; ++j) si += uint(w[j]) * P.p.src_pitch[j];
        ACC v = LOAD_SRC(source.v[si]);
        acc = v + acc;
      }
      // Next window: the last active axis moves fastest.
      bool done = true;
      [[unroll]] for (int j = NA - 1; j >= 0; --j) {
        w[j] += 1;
        if (w[j] <= whi[j]) {
          done = false;
          break;
        }
        w[j] = wlo[j];
      }
      if (done) break;
    }
#else
    if (any_window) acc = LOAD_SRC(source.v[src_fixed]) + acc;
#endif
    dst.v[o] = STORE_OUT(acc);
  }
}
