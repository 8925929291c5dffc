// GEMM for CPU drivers (llvmpipe runs a workgroup's invocations as SIMD lanes; a load whose
// address differs per lane becomes a gather, component by component): the workgroup takes TM
// rows of C, the same for every invocation, and each invocation 4 * TN4 adjacent columns.
// Per k, an invocation loads TN4 vectors of B[k, n..n+3] and the TM values A[m, k] (the same
// address in every lane), and does TM * TN4 vector multiply-adds. No shared memory, no
// barriers; the CPU caches keep the tiles. On lavapipe (2 cores) this ran 512^3 f32 4-10x
// faster than the tiled kernel (gemm.comp) with any of its tiles.
// The host uses it where B is read along n with sb_k, sb_batch, n and the offset multiples of
// 4 (aligned vector loads). Rows and columns past the edges are clamped on load and not stored.
// llvmpipe gathers each component of a vector load separately, so with WIDE_LOADS the four
// 32-bit values of B_VEC (and A_VEC) are loaded as two 64-bit ones (u64vec2), half the gathers.
// Defines: TM, TN4, ACC, ACC4 (vector of ACC), ZERO4, MAC4(acc, a, b) (a: ACC, b: ACC4);
// A_/B_/C_STORE and _ALIGN, B_VEC (4 stored B values), B_VALIGN; LOAD_A(x) (-> ACC),
// LOAD_B4(q) (B_VEC -> ACC4), STORE_OUT(v); WIDE_LOADS; EPILOGUE (dot_epilogue.glsl).
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
#if NXV_INT64 || WIDE_LOADS
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { GemmPush pc; };

layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_VALIGN) readonly buffer B4Buf { B_VEC v[]; };
#if A_VEC4
layout(buffer_reference, std430, buffer_reference_align = A_VALIGN) readonly buffer A4Buf { A_VEC v[]; };
#endif
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { C_STORE v[]; };

#include "dot_epilogue.glsl"

void main() {
  ABuf a = ABuf(pc.a_addr);
  B4Buf b = B4Buf(pc.b_addr);
  CBuf c = CBuf(pc.c_addr);
  uint wg = gl_WorkGroupSize.x;
  uint cols = 4u * TN4;  // per invocation
  uint tiles_n = (pc.n + wg * cols - 1u) / (wg * cols), tiles_m = (pc.m + TM - 1u) / TM;
  for (uint bz = gl_WorkGroupID.z; bz < pc.batch; bz += gl_NumWorkGroups.z) {
    uint abase = bz * pc.sa_batch, bbase = bz * pc.sb_batch, cbase = bz * pc.m * pc.n;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint m0 = tm * TM;
        uint n0 = (tn * wg + gl_LocalInvocationID.x) * cols;
        // Element offsets of the rows (uniform) and the vector columns (clamped in range).
        uint arow[TM];
        [[unroll]] for (uint i = 0u; i < TM; ++i) arow[i] = abase + min(m0 + i, pc.m - 1u) * pc.sa_m;
        uint bcol[TN4];
        [[unroll]] for (uint j = 0u; j < TN4; ++j) bcol[j] = (bbase + min(n0 + 4u * j, pc.n - 4u)) / 4u;
        uint sk4 = pc.sb_k / 4u;
        ACC4 acc[TM][TN4];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN4; ++j) acc[i][j] = ZERO4;
        uint k = 0u;
#if A_VEC4
        // A read along k four at a time (the host checks that rows start 4-aligned).
        A4Buf a4 = A4Buf(pc.a_addr);
        for (; k + 4u <= pc.k; k += 4u) {
          ACC4 bq[4][TN4];
          [[unroll]] for (uint s = 0u; s < 4u; ++s)
            [[unroll]] for (uint j = 0u; j < TN4; ++j) bq[s][j] = LOAD_B4(b.v[bcol[j] + (k + s) * sk4]);
          [[unroll]] for (uint i = 0u; i < TM; ++i) {
            ACC4 aq = LOAD_A4(a4.v[(arow[i] + k) / 4u]);
            [[unroll]] for (uint s = 0u; s < 4u; ++s)
              [[unroll]] for (uint j = 0u; j < TN4; ++j) acc[i][j] = MAC4(acc[i][j], aq[s], bq[s][j]);
          }
        }
#endif
        for (; k < pc.k; ++k) {
          ACC4 bv[TN4];
          [[unroll]] for (uint j = 0u; j < TN4; ++j) bv[j] = LOAD_B4(b.v[bcol[j] + k * sk4]);
          [[unroll]] for (uint i = 0u; i < TM; ++i) {
            ACC av = LOAD_A(a.v[arow[i] + k * pc.sa_k]);
            [[unroll]] for (uint j = 0u; j < TN4; ++j) acc[i][j] = MAC4(acc[i][j], av, bv[j]);
          }
        }
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          uint gm = m0 + i;
          [[unroll]] for (uint j = 0u; j < TN4; ++j) {
            [[unroll]] for (uint e = 0u; e < 4u; ++e) {
              uint gn = n0 + 4u * j + e;
              if (gm < pc.m && gn < pc.n) {
                ACC v = acc[i][j][e];
                c.v[cbase + gm * pc.n + gn] = STORE_RESULT_AT(bz, gm, gn, v);
              }
            }
          }
        }
      }
    }
  }
}
