// window_scatter_max/min (the gradient of max/min pooling), as a gather: each invocation owns
// one position of the tensor, visits the windows that contain it in row-major order, finds
// each one's selected element as Nx.BinaryBackend does (the window's first element, then
// every later one that is >= (max) or <= (min) the current pick; padding holds the init
// value), and adds that window's source value where the pick is its own position:
// out = init + the source values in window order; no atomics, the same bits every run.
// TILED: the windows tile the tensor exactly (stride = window, no padding), so an invocation
// takes a whole window, picks once and writes every position of it.
// Defines: NR, WINS, WSIZE as in window.comp; TILED; T_STORE/T_ALIGN/LOAD_T(x) (the tensor, compared
// in its compute type TC; INIT_T(x) the init value in it), SRC_STORE/SRC_ALIGN/LOAD_SRC(x),
// INIT_STORE/INIT_ALIGN/LOAD_INIT(x), ACC, OUT_STORE/OUT_ALIGN/STORE_OUT(v), SELECT(x, pick).
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

const int WIN[NR] = int[NR](WINS);
#if WSIZE <= 64
#define WINDOW_LOOP [[unroll]]
#else
#define WINDOW_LOOP [[dont_unroll]]
#endif

#include "nxv_fastdiv.glsl"

int window_coord(uint k, int d) {
  uint pitch = 1u;
  for (int e = NR - 1; e > d; --e) pitch *= uint(WIN[e]);
  return int((k / pitch) % uint(WIN[d]));
}

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  TBuf t = TBuf(pc.in_addr);
  SrcBuf source = SrcBuf(pc.source_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  InitBuf init_buf = InitBuf(pc.init_addr);
  ACC init = LOAD_INIT(init_buf.v[0]);
  TC pad = INIT_T(init_buf.v[0]);
  uint shape[NR], magic[NR], shift[NR], smagic[NR], sshift[NR], windows[NR], src_pitch[NR];
  int in_stride[NR], stride[NR], lo[NR];
  [[unroll]] for (int d = 0; d < NR; ++d) {
    shape[d] = P.p.out_shape[d];
    magic[d] = P.p.out_magic[d];
    shift[d] = P.p.out_shift[d];
    in_stride[d] = P.p.in_stride[d];
    stride[d] = int(P.p.stride[d]);
    smagic[d] = P.p.stride_magic[d];
    sshift[d] = P.p.stride_shift[d];
    lo[d] = P.p.pad_lo[d];
    windows[d] = P.p.windows[d];
    src_pitch[d] = P.p.src_pitch[d];
  }
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#if TILED
  // out_shape holds the window counts here, out_pitch the result's pitches.
  uint out_pitch[NR];
  [[unroll]] for (int d = 0; d < NR; ++d) out_pitch[d] = P.p.out_pitch[d];
  for (uint q = gl_GlobalInvocationID.x; q < pc.n; q += threads) {
    uint rest = q;
    int base = 0;
    uint obase = 0u;
    [[unroll]] for (int d = NR - 1; d >= 0; --d) {
      uint qd = nxv_fastdiv(rest, magic[d], shift[d]);
      uint c = rest - qd * shape[d];
      rest = qd;
      base += int(c) * stride[d] * in_stride[d];
      obase += c * uint(stride[d]) * out_pitch[d];
    }
    TC pick = pad;
    uint pick_k = 0u;
    WINDOW_LOOP for (uint k = 0u; k < WSIZE; ++k) {
      int off = base;
      [[unroll]] for (int d = 0; d < NR; ++d) off += window_coord(k, d) * in_stride[d];
      TC x = LOAD_T(t.v[off]);
      if (k == 0u || SELECT(x, pick)) {
        pick = x;
        pick_k = k;
      }
    }
    ACC v = LOAD_SRC(source.v[q]);
    ACC picked = v + init;
    WINDOW_LOOP for (uint k = 0u; k < WSIZE; ++k) {
      uint oo = obase;
      [[unroll]] for (int d = 0; d < NR; ++d) oo += uint(window_coord(k, d)) * out_pitch[d];
      dst.v[oo] = STORE_OUT(k == pick_k ? picked : init);
    }
  }
#else
  for (uint o = gl_GlobalInvocationID.x; o < pc.n; o += threads) {
    // This position, padded coordinates, and the windows holding it: [wlo, whi] per axis.
    uint rest = o;
    int self_off = 0;
    int padded[NR], wlo[NR], whi[NR], w[NR];
    bool any_window = true;
    [[unroll]] for (int d = NR - 1; d >= 0; --d) {
      uint q = nxv_fastdiv(rest, magic[d], shift[d]);
      int c = int(rest - q * shape[d]);
      rest = q;
      self_off += c * in_stride[d];
      padded[d] = c + lo[d];
      int first = padded[d] - WIN[d] + 1;  // the lowest anchor whose window reaches here
      wlo[d] = first <= 0 ? 0 : int(nxv_fastdiv(uint(first + stride[d] - 1), smagic[d], sshift[d]));
      whi[d] = padded[d] < 0 ? -1 : min(int(windows[d]) - 1, int(nxv_fastdiv(uint(padded[d]), smagic[d], sshift[d])));
      any_window = any_window && wlo[d] <= whi[d];
      w[d] = wlo[d];
    }
    ACC acc = init;
    while (any_window) {
      // Window w: its first element, then each later one that SELECTs over the pick.
      int base = 0;
      bool interior = true;
      int e0[NR];
      [[unroll]] for (int d = 0; d < NR; ++d) {
        e0[d] = w[d] * stride[d] - lo[d];
        base += e0[d] * in_stride[d];
        interior = interior && e0[d] >= 0 && e0[d] + WIN[d] - 1 < int(shape[d]);
      }
      TC pick = pad;
      int pick_off = -1;
      WINDOW_LOOP for (uint k = 0u; k < WSIZE; ++k) {
        int off = base;
        bool valid = true;
        [[unroll]] for (int d = 0; d < NR; ++d) {
          int step = window_coord(k, d);
          valid = valid && (interior || (e0[d] + step >= 0 && e0[d] + step < int(shape[d])));
          off += step * in_stride[d];
        }
        TC x = pad;
        if (valid) x = LOAD_T(t.v[off]);
        if (k == 0u || SELECT(x, pick)) {
          pick = x;
          pick_off = valid ? off : -1;
        }
      }
      if (pick_off == self_off) {
        uint si = 0u;
        [[unroll]] for (int d = 0; d < NR; ++d) si += uint(w[d]) * src_pitch[d];
        ACC v = LOAD_SRC(source.v[si]);
        acc = v + acc;
      }
      // The next window: the last axis moves fastest.
      bool done = true;
      [[unroll]] for (int d = NR - 1; d >= 0; --d) {
        if (done) {
          if (w[d] < whi[d]) {
            w[d] += 1;
            done = false;
          } else {
            w[d] = wlo[d];
          }
        }
      }
      if (done) break;
    }
    dst.v[o] = STORE_OUT(acc);
  }
#endif
}
