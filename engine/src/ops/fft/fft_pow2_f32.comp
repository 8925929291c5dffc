// fft and ifft into c64 of power-of-two length n (2 <= n <= MAX_N) in float: a workgroup per
// row in shared memory, the radix-2 transform of fft_pow2.comp with the same butterflies in the
// same order, run three stages at a time in registers (a group of 8 elements closed under
// them), so that shared memory is read and written once per three stages. The twiddles are
// computed once per workgroup into shared memory (a quarter turn's, the rest by exact quarter
// turns), each within about an ulp of float (fft_twiddle_f32.glsl). Components with |x| <= eps are stored as 0, as Nx.BinaryBackend does.
// Defines: those of dft.comp (in float: LOAD_IN converts to float), MAX_N, WG.
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

shared vec2 buf[MAX_N];
// The first quarter of the forward or inverse twiddles of n (the rest are its quarter turns),
// one slot of padding per 32 so that strided lookups spread over the banks.
shared vec2 tw[MAX_N / 4 + MAX_N / 128];

// buf's slot of element i: the low 5 bits xor the next 5, so that the bit-reversed loads and
// the rounds' strided groups spread over the banks (a permutation within each 32 elements).
uint slot(uint i) { return i ^ ((i >> 5u) & 31u); }
uint tw_slot(uint k) { return k + (k >> 5u); }

// Twiddle k < n / 2 of the transform's direction.
vec2 twiddle(uint k, uint quarter_bits, bool inverse) {
  vec2 w = tw[tw_slot(k & ((1u << quarter_bits) - 1u))];
  if ((k >> quarter_bits) == 0u) return w;
  return inverse ? vec2(-w.y, w.x) : vec2(w.y, -w.x);
}

vec2 input_at(InBuf x, uint len, uint base, uint stride, uint j) {
  if (j >= len) return vec2(0.0);
#if IN_COMPLEX
  return vec2(x.v[base + j * stride]);
#else
  return vec2(LOAD_IN(x.v[base + j * stride]), 0.0);
#endif
}

vec2 cmul(vec2 a, vec2 w) { return vec2(a.x * w.x - a.y * w.y, a.x * w.y + a.y * w.x); }

// Stages s .. s + R - 1 (halves 2^s ..) over the 2^R elements whose indices differ only in bits
// s .. s + R - 1: fft_pow2.comp's butterflies of those stages, in its order within each stage.
// Where a round has 32 or more groups per low part, neighbouring invocations take groups of the
// same low part (their twiddles are one broadcast read); else of neighbouring low parts.
#define NXV_FFT_ROUND(R)                                                                     \
  void round##R(uint s, uint bits, bool inverse) {                                           \
    const uint G = 1u << R;                                                                  \
    uint high_bits = bits - s - R, low_mask = (1u << s) - 1u;                                \
    bool by_high = high_bits >= 5u;                                                          \
    for (uint g = gl_LocalInvocationID.x; g < (1u << (bits - R)); g += WG) {                 \
      uint low = by_high ? g >> high_bits : g & low_mask;                                    \
      uint high = by_high ? g & ((1u << high_bits) - 1u) : g >> s;                           \
      uint base = low | (high << (s + R));                                                   \
      vec2 v[G];                                                                             \
      [[unroll]] for (uint j = 0u; j < G; ++j) v[j] = buf[slot(base | (j << s))];            \
      [[unroll]] for (uint st = 0u; st < R; ++st) {                                          \
        uint half_j = 1u << st, shift = s + st + 1u;                                         \
        [[unroll]] for (uint j = 0u; j < G; ++j) {                                           \
          if ((j & half_j) != 0u) continue;                                                  \
          uint k = low | ((j & (half_j - 1u)) << s);                                         \
          vec2 u = v[j], x = cmul(v[j | half_j], twiddle(k << (bits - shift), bits - 2u, inverse)); \
          v[j] = u + x;                                                                      \
          v[j | half_j] = u - x;                                                             \
        }                                                                                    \
      }                                                                                      \
      [[unroll]] for (uint j = 0u; j < G; ++j) buf[slot(base | (j << s))] = v[j];            \
    }                                                                                        \
  }
NXV_FFT_ROUND(1)
NXV_FFT_ROUND(2)
NXV_FFT_ROUND(3)

void main() {
  FftParams prm = ParamsRef(pc.params_addr).p;
  InBuf x = InBuf(pc.in_addr);
  OutBuf y = OutBuf(pc.out_addr);
  uint t = gl_LocalInvocationID.x, n = prm.n, bits = findMSB(n);
  bool inverse = prm.inverse != 0u;
  uint out_step = fft_out_step(prm), in_step = prm.in_stride[prm.axis], len = prm.len;
  float eps = uintBitsToFloat(prm.eps32), scale = inverse ? 1.0 / float(n) : 1.0;
  for (uint k = t; k < n / 4u; k += WG) {
    vec2 w = fft_turn_f32(k, bits);
    tw[tw_slot(k)] = inverse ? w : vec2(w.x, -w.y);
  }
  for (uint row = gl_WorkGroupID.x; row < prm.rows; row += gl_NumWorkGroups.x) {
    uint in_base, out_base;
    fft_row_bases(prm, row, in_base, out_base);
    // Eight loads in flight per invocation.
    for (uint j0 = t; j0 < n; j0 += 8u * WG) {
      vec2 v[8];
      [[unroll]] for (uint u = 0u; u < 8u; ++u) {
        uint j = j0 + u * WG;
        v[u] = j < n ? input_at(x, len, in_base, in_step, j) : vec2(0.0);
      }
      [[unroll]] for (uint u = 0u; u < 8u; ++u) {
        uint j = j0 + u * WG;
        if (j < n) buf[slot(fft_bit_reversed(j, bits))] = v[u];
      }
    }
    barrier();
    uint s = 0u;
    for (; s + 3u <= bits; s += 3u) {
      round3(s, bits, inverse);
      barrier();
    }
    if (bits - s == 2u) round2(s, bits, inverse);
    else if (bits - s == 1u) round1(s, bits, inverse);
    barrier();
    for (uint k = t; k < n; k += WG) {
      vec2 v = buf[slot(k)] * scale;  // a power of two: exact
      if (abs(v.x) <= eps) v.x = 0.0;
      if (abs(v.y) <= eps) v.y = 0.0;
      y.v[out_base + k * out_step] = OUT_STORE(v);
    }
    barrier();  // the next row writes buf again
  }
}
