// Matrix-vector product (dot with M == 1 or N == 1, and one per column where N is small):
// out[b, r] = sum_k MAT[b, r, k] * VEC[b, k], stored at b * sout_batch + r * sout_row.
// Memory bound: the layout decides the mapping so that neighbouring invocations read
// neighbouring matrix elements. COLS (the matrix's rows are adjacent, stride 1 between
// outputs): LX invocations take LX * VW outputs (VW = 4: each reads four adjacent outputs'
// elements in one vector load) and LY of them split k. Otherwise (k adjacent): LX
// invocations split the k of one row, LY rows per workgroup. The k-split partial sums are
// combined in a fixed order through shared memory. On CPU drivers the host takes COLS with
// LY = 1 for any layout (one output per lane, the vector's reads at one address).
// Split-K: with pc.splits > 1, grid z splits k further across workgroups, whose sums go to
// pc.part_addr for dot_split_sum.comp (so that a few long rows still fill a GPU).
// VECS > 1 (only where every vector multiplies the same matrix: smat_batch == 0): a workgroup
// takes VECS vectors, each matrix load serving them all; every output still sums its k in the
// same order and combines its lanes in the same pairs as with one vector.
// Defines: LX, LY, COLS, VW, VECS; ACC, ZERO, MAC(acc, m, v); M_/V_/OUT_STORE and _ALIGN;
// LOAD_M(x), LOAD_V(x), STORE_OUT(v), EPILOGUE (dot_epilogue.glsl); with VW == 4: ACC4, ZERO4, MAC4(acc, m4, v), M_VEC,
// M_VALIGN, LOAD_M4(q); DOT_PROLOGUE (dot_prologue.cpp: LOAD_M / LOAD_V read through generated
// functions).
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
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { MatvecPush pc; };

layout(buffer_reference, std430, buffer_reference_align = M_ALIGN) readonly buffer MBuf { M_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = V_ALIGN) readonly buffer VBuf { V_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
layout(buffer_reference, std430) writeonly buffer PartBuf { ACC v[]; };

// Operand prologues (ops/dot/dot_prologue.cpp): the functions LOAD_M and LOAD_V read through; the
// first part of the generated code where there is an epilogue too.
#ifdef DOT_PROLOGUE
#define NXV_CHAIN_ZERO (pc.k_chunk >> 31u)
#include "nxv_generated.glsl"
#undef NXV_CHAIN_ZERO
#endif
#include "dot_epilogue.glsl"
#if VW == 4
layout(buffer_reference, std430, buffer_reference_align = M_VALIGN) readonly buffer M4Buf { M_VEC v[]; };
#define VACC ACC4
#define VZERO ZERO4
#else
#define VACC ACC
#define VZERO ZERO
#endif

const uint WG = LX * LY;

// Output (b, r)'s coordinate along the dot's axis `axis` (0 batch, 1 m, 2 n; pc.coords).
uint dot_coord(uint axis, uint b, uint r) {
  return (pc.coords & 3u) == axis ? b : ((pc.coords >> 2u) & 3u) == axis ? r : 0u;
}

// Output e of an invocation's VW adjacent ones.
ACC acc_at(VACC a, uint e) {
#if VW == 4
  return a[e];
#else
  return a;
#endif
}
#if COLS
const uint OUTS = LX * VW;  // outputs per workgroup
const uint KL = LY;         // invocations splitting k
const uint KSTEP = LX;      // index distance between the k-split partners
#else
const uint OUTS = LY;
const uint KL = LX;
const uint KSTEP = 1u;
#endif
shared VACC part[WG * VECS];

void main() {
  MBuf mat = MBuf(pc.mat_addr);
  VBuf vec = VBuf(pc.vec_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  PartBuf partial = PartBuf(pc.part_addr);
#if VW == 4
  M4Buf mat_vec4 = M4Buf(pc.mat_addr);
#endif
  uint t = gl_LocalInvocationID.x;
  uint lx = t % LX, ly = LY == 1u ? 0u : t / LX;  // a constant where LY is 1
#if COLS
  uint olane = lx * VW, klane = ly;
#else
  uint olane = ly, klane = lx;
#endif
  uint split = gl_WorkGroupID.z;
  uint k_begin = split * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
  uint groups = (pc.rows + OUTS - 1u) / OUTS;
  for (uint bz = gl_WorkGroupID.y * VECS; bz < pc.batch; bz += gl_NumWorkGroups.y * VECS) {
    const uint vecs = VECS == 1u ? 1u : min(VECS, pc.batch - bz);  // this round's vectors
    for (uint g = gl_WorkGroupID.x; g < groups; g += gl_NumWorkGroups.x) {
      uint r = g * OUTS + olane;
      VACC acc[VECS];
      [[unroll]] for (uint j = 0u; j < VECS; ++j) acc[j] = VZERO;
      if (r < pc.rows) {
        uint mbase = bz * pc.smat_batch + r * pc.smat_row;
        uint sk = pc.smat_k, sv = pc.svec_k;
        uint k = k_begin + klane;
#if VW == 4
        // Four adjacent outputs (the host checks alignment: rows, strides, offset % 4 == 0).
        uint mbase4 = mbase / 4u, sk4 = sk / 4u;
        // Four loads of each in flight, accumulated in order.
        for (; k + 3u * KL < k_end; k += 4u * KL) {
          VACC m0 = LOAD_M4(mat_vec4.v[mbase4 + k * sk4]), m1 = LOAD_M4(mat_vec4.v[mbase4 + (k + KL) * sk4]);
          VACC m2 = LOAD_M4(mat_vec4.v[mbase4 + (k + 2u * KL) * sk4]);
          VACC m3 = LOAD_M4(mat_vec4.v[mbase4 + (k + 3u * KL) * sk4]);
          [[unroll]] for (uint j = 0u; j < VECS; ++j) {
            if (j == vecs) break;
            uint vbase = (bz + j) * pc.svec_batch;
            ACC v0 = LOAD_V(vec.v[vbase + k * sv]), v1 = LOAD_V(vec.v[vbase + (k + KL) * sv]);
            ACC v2 = LOAD_V(vec.v[vbase + (k + 2u * KL) * sv]), v3 = LOAD_V(vec.v[vbase + (k + 3u * KL) * sv]);
            acc[j] = MAC4(acc[j], m0, v0);
            acc[j] = MAC4(acc[j], m1, v1);
            acc[j] = MAC4(acc[j], m2, v2);
            acc[j] = MAC4(acc[j], m3, v3);
          }
        }
        for (; k < k_end; k += KL) {
          VACC m0 = LOAD_M4(mat_vec4.v[mbase4 + k * sk4]);
          [[unroll]] for (uint j = 0u; j < VECS; ++j) {
            if (j == vecs) break;
            acc[j] = MAC4(acc[j], m0, LOAD_V(vec.v[(bz + j) * pc.svec_batch + k * sv]));
          }
        }
#else
        // Four loads of each in flight, accumulated in order.
        for (; k + 3u * KL < k_end; k += 4u * KL) {
          ACC m0 = LOAD_M(mat.v[mbase + k * sk]), m1 = LOAD_M(mat.v[mbase + (k + KL) * sk]);
          ACC m2 = LOAD_M(mat.v[mbase + (k + 2u * KL) * sk]), m3 = LOAD_M(mat.v[mbase + (k + 3u * KL) * sk]);
          [[unroll]] for (uint j = 0u; j < VECS; ++j) {
            if (j == vecs) break;
            uint vbase = (bz + j) * pc.svec_batch;
            ACC v0 = LOAD_V(vec.v[vbase + k * sv]), v1 = LOAD_V(vec.v[vbase + (k + KL) * sv]);
            ACC v2 = LOAD_V(vec.v[vbase + (k + 2u * KL) * sv]), v3 = LOAD_V(vec.v[vbase + (k + 3u * KL) * sv]);
            acc[j] = MAC(acc[j], m0, v0);
            acc[j] = MAC(acc[j], m1, v1);
            acc[j] = MAC(acc[j], m2, v2);
            acc[j] = MAC(acc[j], m3, v3);
          }
        }
        for (; k < k_end; k += KL) {
          ACC m0 = LOAD_M(mat.v[mbase + k * sk]);
          [[unroll]] for (uint j = 0u; j < VECS; ++j) {
            if (j == vecs) break;
            acc[j] = MAC(acc[j], m0, LOAD_V(vec.v[(bz + j) * pc.svec_batch + k * sv]));
          }
        }
#endif
      }
      if (KL > 1u) {
        [[unroll]] for (uint j = 0u; j < VECS; ++j) part[j * WG + t] = acc[j];
        barrier();
        [[unroll]] for (uint s = KL / 2u; s > 0u; s >>= 1u) {
          if (klane < s) {
            [[unroll]] for (uint j = 0u; j < VECS; ++j) {
              VACC mine = part[j * WG + t], other = part[j * WG + t + s * KSTEP];
              part[j * WG + t] = mine + other;
            }
          }
          barrier();
        }
        [[unroll]] for (uint j = 0u; j < VECS; ++j) acc[j] = part[j * WG + t];
        barrier();  // the next round writes part again
      }
      if (klane != 0u || r >= pc.rows) continue;
      if (pc.splits > 1u) {
        [[unroll]] for (uint j = 0u; j < VECS; ++j) {
          if (j >= vecs) continue;
          uint o = (bz + j) * pc.sout_batch + r * pc.sout_row;
          [[unroll]] for (uint e = 0u; e < VW; ++e) partial.v[split * pc.batch * pc.rows + o + e * pc.sout_row] = acc_at(acc[j], e);
        }
        continue;
      }
      // Every result first, then the stores: an epilogue's reads are then in flight together
      // rather than each waiting for the store before it (which may alias them).
      RESULT_REG results[VECS][VW];
      [[unroll]] for (uint j = 0u; j < VECS; ++j) {
        if (j >= vecs) continue;
        [[unroll]] for (uint e = 0u; e < VW; ++e) {
          uint b = bz + j, re = r + e;
          results[j][e] = RESULT_AT(dot_coord(0u, b, re), dot_coord(1u, b, re), dot_coord(2u, b, re), acc_at(acc[j], e));
        }
      }
      [[unroll]] for (uint j = 0u; j < VECS; ++j) {
        if (j >= vecs) continue;
        uint o = (bz + j) * pc.sout_batch + r * pc.sout_row;
        [[unroll]] for (uint e = 0u; e < VW; ++e) dst.v[o + e * pc.sout_row] = STORE_REG(results[j][e]);
      }
    }
  }
}
