// Triangular solve by substitution, in double: workgroup (rhs, batch) solves M y = c, M lower
// (rows in order) or upper (rows in reverse), M_ij = A_ij, A_ji (transposed) or conj(A_ij).
// For each row the workgroup sums M_ij y_j over the rows solved so far (each invocation a
// strided share, then a tree in shared memory), and invocation 0 sets y_i = (c_i - sum) / M_ii;
// the solved values stay in shared memory unrounded, as Nx.BinaryBackend keeps them (a zero
// on the diagonal gives Inf or NaN here; the Elixir backend raises before).
// Defines: XT (double or dvec2), A_STORE/A_ALIGN, B_STORE/B_ALIGN, OUT_STORE/OUT_ALIGN,
// LOAD_A(x), LOAD_B(x) (stored -> XT), STORE_X(v) (XT -> stored), COMPLEX, MAX_N, WG.
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
#include "triangular_solve_push.h"

layout(push_constant, std430) uniform Push { TriangularSolvePush pc; };
layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { B_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer XBuf { OUT_STORE v[]; };

shared XT y[MAX_N];
shared XT partial[WG];

#if COMPLEX
XT mul(XT p, XT q) { return dvec2(p.x * q.x - p.y * q.y, p.x * q.y + p.y * q.x); }
XT div(XT p, XT q) {
  double d = q.x * q.x + q.y * q.y;
  return dvec2((p.x * q.x + p.y * q.y) / d, (p.y * q.x - p.x * q.y) / d);
}
XT conj_if(XT p) { return pc.conjugate != 0u ? dvec2(p.x, -p.y) : p; }
#else
XT mul(XT p, XT q) { return p * q; }
XT div(XT p, XT q) { return p / q; }
XT conj_if(XT p) { return p; }
#endif

void main() {
  ABuf a = ABuf(pc.a_addr);
  BBuf b = BBuf(pc.b_addr);
  XBuf x = XBuf(pc.x_addr);
  uint t = gl_LocalInvocationID.x, n = pc.n;
  uint r = gl_WorkGroupID.x, bz = gl_WorkGroupID.y;
  uint abase = bz * n * n, bbase = bz * pc.b_batch + r * pc.rhs_stride;
  // M_ij = A[mi * i + mj * j].
  uint mi = pc.transposed != 0u ? 1u : n, mj = pc.transposed != 0u ? n : 1u;
  for (uint s = 0u; s < n; ++s) {
    uint i = pc.lower != 0u ? s : n - 1u - s;
    // The rows solved so far: j < i (lower) or j > i (upper).
    XT sum = XT(0);
    for (uint q = t; q < s; q += WG) {
      uint j = pc.lower != 0u ? q : n - 1u - q;
      sum += mul(conj_if(LOAD_A(a.v[abase + i * mi + j * mj])), y[j]);
    }
    partial[t] = sum;
    barrier();
    [[unroll]] for (uint half_ = WG / 2u; half_ > 0u; half_ >>= 1u) {
      if (t < half_) partial[t] += partial[t + half_];
      barrier();
    }
    if (t == 0u) {
      XT c = LOAD_B(b.v[bbase + i * pc.elem_stride]);
      XT v = div(c - partial[0], conj_if(LOAD_A(a.v[abase + i * (mi + mj)])));
      y[i] = v;
      x.v[bbase + i * pc.elem_stride] = STORE_X(v);
    }
    barrier();
  }
}
