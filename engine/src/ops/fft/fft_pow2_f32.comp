// fft and ifft into c64 of power-of-two length n (64 <= n <= MAX_N) in float, by Stockham's
// autosort transform: each pass takes a group of R elements n / R apart (R = 16, the first pass
// the remainder), applies the twiddles of the radices before it, transforms them in registers
// and stores them R apart in the next order, so that the first pass reads the input and the
// last writes the output, both coalesced, and shared memory carries the passes between (two
// for rows of 4096 where radix 2 took twelve stages). A workgroup holds MAX_N elements: one row,
// or MAX_N / n rows at a time. The twiddles are computed once per workgroup into shared memory
// (a quarter turn's, the rest by exact quarter turns), each within about an ulp of float
// (fft_twiddle_f32.glsl). Components with |x| <= eps are stored as 0, as Nx.BinaryBackend does.
// Rows longer than MAX_N run as two launches of it (fft.cpp): the row as a matrix, its columns
// then its rows, the first launch multiplying its results by the long row's twiddles.
// Defines: those of dft.comp (in float: LOAD_IN converts to float), MAX_N, PER_INVOCATION (the
// elements an invocation holds: the largest radix, 16 but on tiny MAX_N), WG (MAX_N / it),
// LONG_ROW (the first launch of a long row's two: its twiddles).
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

#include "fft_layout.glsl"
#include "fft_twiddle_f32.glsl"

#define E PER_INVOCATION

// The rows of a pass, one slot of padding per 16 so that groups stored R apart spread over the
// banks.
shared vec2 buf[MAX_N + MAX_N / 16u];
// The first quarter of the forward or inverse twiddles of n (the rest are its quarter turns),
// one slot of padding per 32 so that strided lookups spread over the banks.
shared vec2 tw[MAX_N / 4u + MAX_N / 128u + 1u];

// Where each row of a batch starts in the input (~0u: past the last row) and the output, two
// batches' worth so that a batch's are written while the last one's stores read theirs.
shared uint row_in[2u * (MAX_N / 64u + 1u)], row_out[2u * (MAX_N / 64u + 1u)];

uint slot(uint i) { return i + (i >> 4u); }
uint tw_slot(uint k) { return k + (k >> 5u); }

// The launch's constants, and the batch's first row in row_in and row_out.
FftParams prm;
InBuf x;
OutBuf y;
uint n, bits, in_step, out_step, len, table, batch_first;
bool inverse;
float eps, scale;

// w_n^e for e < n in the transform's direction.
vec2 twiddle(uint e) {
  uint q = e >> (bits - 2u);
  vec2 w = tw[tw_slot(e & ((1u << (bits - 2u)) - 1u))];
  if ((q & 2u) != 0u) w = -w;
  if ((q & 1u) != 0u) w = inverse ? vec2(-w.y, w.x) : vec2(w.y, -w.x);
  return w;
}

vec2 cmul(vec2 a, vec2 w) { return vec2(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x); }

#if LONG_ROW
// w_N^e of the long row this launch is the first of (N = 2^twiddle_bits), in the transform's
// direction.
vec2 long_twiddle(uint e) {
  vec2 w = fft_turn_f32(e & ((1u << prm.twiddle_bits) - 1u), prm.twiddle_bits);
  return inverse ? w : vec2(w.x, -w.y);
}
// A result's column j2 of the long row, and its twiddle at position k1 of the column.
#define LONG_ROW_J2 uint j2 = ((batch_first + row_l) / prm.twiddle_inner) % prm.twiddle_count;
#define LONG_ROW_TWIDDLE(o, k1) o = cmul(o, long_twiddle(j2 * (k1)));
#else
#define LONG_ROW_J2
#define LONG_ROW_TWIDDLE(o, k1)
#endif

// w_16^m (forward: exp(-2 pi i m / 16)) for m < 8, rounded to float.
const vec2 kW16[8] = vec2[](vec2(1.0, 0.0), vec2(0.92387953251128676, -0.38268343236508977),
                            vec2(0.70710678118654752, -0.70710678118654752),
                            vec2(0.38268343236508977, -0.92387953251128676), vec2(0.0, -1.0),
                            vec2(-0.38268343236508977, -0.92387953251128676),
                            vec2(-0.70710678118654752, -0.70710678118654752),
                            vec2(-0.92387953251128676, -0.38268343236508977));

// The R-point DFT of v[at .. at + R - 1] (the pass's own registers) in place, by radix-2
// decimation in frequency (the result in bit-reversed order: see reversed()). Multiplications by
// 1 and quarter turns are exact.
#define NXV_FFT_REGISTERS(R, at)                                                 \
  [[unroll]] for (uint half_ = R / 2u; half_ >= 1u; half_ >>= 1u) {              \
    [[unroll]] for (uint b = 0u; b < R; b += 2u * half_) {                       \
      [[unroll]] for (uint m = 0u; m < half_; ++m) {                             \
        vec2 a = v[at + b + m], c = v[at + b + m + half_];                       \
        v[at + b + m] = a + c;                                                   \
        vec2 d = a - c;                                                          \
        uint k = m * (8u / half_);                                               \
        if (k == 4u) d = inverse ? vec2(-d.y, d.x) : vec2(d.y, -d.x);            \
        else if (k != 0u) {                                                      \
          vec2 w = kW16[k];                                                      \
          d = cmul(d, inverse ? vec2(w.x, -w.y) : w);                            \
        }                                                                        \
        v[at + b + m + half_] = d;                                               \
      }                                                                          \
    }                                                                            \
  }

// Position of output k of an R = 2^LR point NXV_FFT_REGISTERS.
uint reversed(uint k, uint LR) { return (bitfieldReverse(k) >> (32u - LR)); }

vec2 input_at(uint base, uint j) {
  if (j >= len) return vec2(0.0);
#if IN_COMPLEX
  return vec2(x.v[base + j * in_step]);
#else
  return vec2(LOAD_IN(x.v[base + j * in_step]), 0.0);
#endif
}

// One Stockham pass of radix R = 2^LR after radices multiplying to Ns = 2^ns_bits: an
// invocation's group i is g = t + i WG, row g >> (bits - LR) of the batch, j = g mod n / R; it
// takes the row's elements j + r n / R (from the input when first), times
// w_n^(j mod Ns) r n / (Ns R), and stores their transform's k-th at (j / Ns) Ns R + j mod Ns + k Ns
// (to the output when last). Between a pass's loads from buf and its stores, every
// invocation's loads are done.
#define NXV_FFT_PASS(R, LR)                                                                     \
  void pass##R(uint ns_bits, bool first, bool last) {                                          \
    vec2 v[E]; /* the invocation's groups, R elements each, in registers */                     \
    uint t = gl_LocalInvocationID.x, span_bits = bits - LR, ns_mask = (1u << ns_bits) - 1u;    \
    uint j_mask = (1u << span_bits) - 1u;                                                       \
    if (first) {                                                                                \
      [[unroll]] for (uint i = 0u; i < E / R; ++i) {                                            \
        uint g = t + i * WG, base = row_in[table + (g >> span_bits)], j = g & j_mask;           \
        [[unroll]] for (uint r = 0u; r < R; ++r)                                                \
          v[i * R + r] = base != ~0u ? input_at(base, j + (r << span_bits)) : vec2(0.0);        \
      }                                                                                         \
    } else {                                                                                    \
      barrier();                                                                                \
      [[unroll]] for (uint i = 0u; i < E / R; ++i) {                                            \
        uint g = t + i * WG, at = ((g >> span_bits) << bits) + (g & j_mask);                    \
        [[unroll]] for (uint r = 0u; r < R; ++r) v[i * R + r] = buf[slot(at + (r << span_bits))]; \
      }                                                                                         \
      barrier();                                                                                \
    }                                                                                           \
    [[unroll]] for (uint i = 0u; i < E / R; ++i) {                                              \
      if (ns_bits != 0u) {                                                                      \
        uint e0 = ((t + i * WG) & ns_mask) << (span_bits - ns_bits);                            \
        [[unroll]] for (uint r = 1u; r < R; ++r) v[i * R + r] = cmul(v[i * R + r], twiddle(e0 * r)); \
      }                                                                                         \
      NXV_FFT_REGISTERS(R, i * R)                                                               \
    }                                                                                           \
    [[unroll]] for (uint i = 0u; i < E / R; ++i) {                                              \
      uint g = t + i * WG, row_l = g >> span_bits, j = g & j_mask;                              \
      uint to = ((j >> ns_bits) << (ns_bits + LR)) + (j & ns_mask);                             \
      if (last) {                                                                               \
        if (row_in[table + row_l] != ~0u) {                                                     \
          uint at = row_out[table + row_l] + to * out_step;                                     \
          LONG_ROW_J2                                                                           \
          [[unroll]] for (uint k = 0u; k < R; ++k) {                                            \
            vec2 o = v[i * R + reversed(k, LR)] * scale; /* a power of two: exact */           \
            LONG_ROW_TWIDDLE(o, to + (k << ns_bits))                                            \
            if (abs(o.x) <= eps) o.x = 0.0;                                                     \
            if (abs(o.y) <= eps) o.y = 0.0;                                                     \
            y.v[at + ((k << ns_bits) * out_step)] = OUT_STORE(o);                               \
          }                                                                                     \
        }                                                                                       \
      } else {                                                                                  \
        uint at = (row_l << bits) + to;                                                         \
        [[unroll]] for (uint k = 0u; k < R; ++k) buf[slot(at + (k << ns_bits))] = v[i * R + reversed(k, LR)]; \
      }                                                                                         \
    }                                                                                           \
  }

NXV_FFT_PASS(2u, 1u)
#if E >= 4
NXV_FFT_PASS(4u, 2u)
#endif
#if E >= 8
NXV_FFT_PASS(8u, 3u)
#endif
#if E >= 16
NXV_FFT_PASS(16u, 4u)
#endif

void run_pass(uint lr, uint ns_bits, bool first, bool last) {
#if E >= 16
  if (lr == 4u) pass16u(ns_bits, first, last);
#endif
#if E >= 8
  if (lr == 3u) pass8u(ns_bits, first, last);
#endif
#if E >= 4
  if (lr == 2u) pass4u(ns_bits, first, last);
#endif
  if (lr == 1u) pass2u(ns_bits, first, last);
}

void main() {
  prm = ParamsRef(pc.params_addr).p;
  x = InBuf(pc.in_addr);
  y = OutBuf(pc.out_addr);
  n = prm.n;
  bits = findMSB(n);
  inverse = prm.inverse != 0u;
  in_step = prm.in_stride[prm.axis];
  out_step = fft_out_step(prm);
  len = prm.len;
  eps = uintBitsToFloat(prm.eps32);
  scale = inverse ? 1.0 / float(n) : 1.0;
  uint t = gl_LocalInvocationID.x;
  for (uint k = t; k < n / 4u; k += WG) {
    vec2 w = fft_turn_f32(k, bits);
    tw[tw_slot(k)] = inverse ? w : vec2(w.x, -w.y);
  }
  // Radix E for every pass but the first, which takes what is left over.
  uint e_bits = findMSB(uint(E)), passes = (bits + e_bits - 1u) / e_bits;
  uint first_bits = bits - (passes - 1u) * e_bits;
  uint row_bits = findMSB(uint(MAX_N)) - bits;  // a batch's rows: 2^row_bits
  uint batches = (prm.rows + (1u << row_bits) - 1u) >> row_bits;
  for (uint batch = gl_WorkGroupID.x, b = 0u; batch < batches; batch += gl_NumWorkGroups.x, ++b) {
    table = (b & 1u) * (MAX_N / 64u + 1u);
#if LONG_ROW
    batch_first = batch << row_bits;
#endif
    if (t < (1u << row_bits)) {
      uint row = (batch << row_bits) + t, in_base = ~0u, out_base = 0u;
      if (row < prm.rows) fft_row_bases(prm, row, in_base, out_base);
      row_in[table + t] = in_base;
      row_out[table + t] = out_base;
    }
    barrier();
    uint ns_bits = 0u;
    for (uint p = 0u; p < passes; ++p) {
      uint lr = p == 0u ? first_bits : e_bits;
      run_pass(lr, ns_bits, p == 0u, p + 1u == passes);
      ns_bits += lr;
    }
  }
}
