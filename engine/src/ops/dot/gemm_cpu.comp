// GEMM for CPU drivers: C[b, m, n] (row-major) = sum_k A[b, m, k] * B[b, k, n], A and B read
// through any strides, every type. llvmpipe runs a subgroup's invocations as SIMD lanes (8 with
// AVX2) and, inside loops, turns every global load into a gather, one per component, even where
// the address is the same in every lane. So each invocation takes TN columns of B (lane + j *
// WG: the lanes of a gather read adjacent elements) for the workgroup's TM rows of A, and with
// SG > 0 (the subgroup size) lane l loads A[row, k0 + l]: one gather brings SG steps of k for a
// row, and each step takes its value from lane s by a shuffle (a register move). Per k, TN
// gathers of B feed TM * TN multiply-adds. Accumulators in registers; no shared memory, no
// barriers. Rows and columns past the edges are clamped on load and not stored.
// Defines: TM, TN, SG (0: A loaded by every lane, no subgroup operations), SHUFFLE(v, s) (with
// SG); ACC, ZERO, MAC(acc, a, b); A_/B_/C_STORE and _ALIGN; LOAD_A(x), LOAD_B(x) (stored ->
// ACC), STORE_OUT(v); EPILOGUE (dot_epilogue.glsl).
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
#if SG
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { GemmPush pc; };

layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { B_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { C_STORE v[]; };

#include "dot_epilogue.glsl"

void main() {
  ABuf a = ABuf(pc.a_addr);
  BBuf b = BBuf(pc.b_addr);
  CBuf c = CBuf(pc.c_addr);
  uint wg = gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  uint tiles_n = (pc.n + wg * TN - 1u) / (wg * TN), tiles_m = (pc.m + TM - 1u) / TM;
  for (uint bz = gl_WorkGroupID.z; bz < pc.batch; bz += gl_NumWorkGroups.z) {
    uint abase = bz * pc.sa_batch, bbase = bz * pc.sb_batch, cbase = bz * pc.m * pc.n;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint m0 = tm * TM, n0 = tn * wg * TN + lane;
        uint arow[TM];
        [[unroll]] for (uint i = 0u; i < TM; ++i) arow[i] = abase + min(m0 + i, pc.m - 1u) * pc.sa_m;
        uint bcol[TN];
        [[unroll]] for (uint j = 0u; j < TN; ++j) bcol[j] = bbase + min(n0 + j * wg, pc.n - 1u) * pc.sb_n;
        ACC acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = ZERO;
        uint k0 = 0u;
#if SG
        uint sl = gl_SubgroupInvocationID;
        for (; k0 + SG <= pc.k; k0 += SG) {
          ACC ar[TM];
          uint ka = (k0 + sl) * pc.sa_k;
          [[unroll]] for (uint i = 0u; i < TM; ++i) ar[i] = LOAD_A(a.v[arow[i] + ka]);
          [[unroll]] for (uint s = 0u; s < SG; ++s) {
            ACC bv[TN];
            uint kb = (k0 + s) * pc.sb_k;
            [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = LOAD_B(b.v[bcol[j] + kb]);
            [[unroll]] for (uint i = 0u; i < TM; ++i) {
              ACC av = SHUFFLE(ar[i], s);
              [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = MAC(acc[i][j], av, bv[j]);
            }
          }
        }
        if (k0 < pc.k) {
          ACC ar[TM];
          uint ka = min(k0 + sl, pc.k - 1u) * pc.sa_k;
          [[unroll]] for (uint i = 0u; i < TM; ++i) ar[i] = LOAD_A(a.v[arow[i] + ka]);
          for (uint s = 0u; k0 + s < pc.k; ++s) {
            ACC bv[TN];
            uint kb = (k0 + s) * pc.sb_k;
            [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = LOAD_B(b.v[bcol[j] + kb]);
            [[unroll]] for (uint i = 0u; i < TM; ++i) {
              ACC av = SHUFFLE(ar[i], s);
              [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = MAC(acc[i][j], av, bv[j]);
            }
          }
        }
#else
        for (uint ka = 0u, kb = 0u; k0 < pc.k; ++k0, ka += pc.sa_k, kb += pc.sb_k) {
          ACC bv[TN];
          [[unroll]] for (uint j = 0u; j < TN; ++j) bv[j] = LOAD_B(b.v[bcol[j] + kb]);
          [[unroll]] for (uint i = 0u; i < TM; ++i) {
            ACC av = LOAD_A(a.v[arow[i] + ka]);
            [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = MAC(acc[i][j], av, bv[j]);
          }
        }
#endif
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          uint gm = m0 + i;
          [[unroll]] for (uint j = 0u; j < TN; ++j) {
            uint gn = n0 + j * wg;
            if (gm < pc.m && gn < pc.n) c.v[cbase + gm * pc.n + gn] = STORE_RESULT_AT(bz, gm, gn, acc[i][j]);
          }
        }
      }
    }
  }
}
