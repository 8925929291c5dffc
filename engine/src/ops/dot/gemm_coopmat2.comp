// Workgroup-scope cooperative-matrix GEMM (VK_NV_cooperative_matrix2): C[b, m, n] =
// sum_k A[b, m, k] * B[b, k, n] for 16-bit float A and B (f16, or bf16 through the same
// SPIR-V retype as gemm_coopmat.comp), accumulated in f32. The workgroup owns one BM x BN
// accumulator matrix and reads BM x BK / BK x BN slices of A and B straight from memory through
// tensor layouts: the driver stages them and splits the product among its subgroups. Slices
// are zero outside the matrices (clamp-to-constant layouts), so any M, N, K is exact; tiles
// that lie wholly inside take unclamped layouts. Same push struct, grid and split-K as
// gemm_coopmat.comp (partial sums in f32 for dot_split_sum.comp).
// Each operand is read along its unit-stride axis: A_T, A's tensor is [k][m] (m contiguous)
// and is read through a transposing view, else [m][k]; B_T, B's tensor is [n][k], else [k][n].
// The host guarantees that axis. A_ALIGN / B_ALIGN: 16 where the address, the other strides
// and the batch stride allow 16-byte reads (multiples of 8 elements), else 2 (ALIGN8 marks the
// former). C16: C holds 16-bit floats (converted from f32 in the matrix), else f32.
// Defines: BM, BN, BK, UNROLL (k steps per trip of the inner loop), A_T, B_T, A_ALIGN, B_ALIGN, A_ALIGN8, B_ALIGN8, C16, C_ALIGN.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "gemm_push.h"

layout(push_constant, std430) uniform Params { GemmPush pc; };

layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { uint16_t v[]; };
#if C16
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { uint16_t v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { float v[]; };
#endif
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer PartBuf { float v[]; };

#define CLAMP gl_CooperativeMatrixClampModeConstantNV
#define ACC_T coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define MAT_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define MAT_B coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>

// One BK step: acc += A[m0.., k0..] * B[k0.., n0..] through layouts `la`, `lb` (clamped or not).
#if A_T
#define LOAD_A(fa, la, k0) coopMatLoadTensorNV(fa, ABuf(pc.a_addr).v, abase, sliceTensorLayoutNV(la, k0, BK, m0, BM), tr)
#else
#define LOAD_A(fa, la, k0) coopMatLoadTensorNV(fa, ABuf(pc.a_addr).v, abase, sliceTensorLayoutNV(la, m0, BM, k0, BK))
#endif
#if B_T
#define LOAD_B(fb, lb, k0) coopMatLoadTensorNV(fb, BBuf(pc.b_addr).v, bbase, sliceTensorLayoutNV(lb, n0, BN, k0, BK), tr)
#else
#define LOAD_B(fb, lb, k0) coopMatLoadTensorNV(fb, BBuf(pc.b_addr).v, bbase, sliceTensorLayoutNV(lb, k0, BK, n0, BN))
#endif
#define STEP(la, lb, k0)           \
  {                                \
    MAT_A fa;                      \
    MAT_B fb;                      \
    LOAD_A(fa, la, k0);            \
    LOAD_B(fb, lb, k0);            \
    acc = coopMatMulAdd(fa, fb, acc); \
  }

void main() {
  uint tiles_n = (pc.n + BN - 1u) / BN, tiles_m = (pc.m + BM - 1u) / BM;
  tensorViewNV<2, false, 1, 0> tr = createTensorViewNV(2, false, 1, 0);
  // Strides and batch offsets in elements; with ALIGN8 the host has checked they are multiples
  // of 8, and saying so lets the loads go 16 bytes at a time.
  uint sa_batch = pc.sa_batch, sb_batch = pc.sb_batch;
#if A_T
  uint sa = pc.sa_k;
#else
  uint sa = pc.sa_m;
#endif
#if B_T
  uint sb = pc.sb_n;
#else
  uint sb = pc.sb_k;
#endif
#if A_ALIGN8
  sa &= ~7u;
  sa_batch &= ~7u;
#endif
#if B_ALIGN8
  sb &= ~7u;
  sb_batch &= ~7u;
#endif
  for (uint z = gl_WorkGroupID.z; z < pc.batch * pc.splits; z += gl_NumWorkGroups.z) {
    uint bz = z / pc.splits, split = z % pc.splits;
    // Where split > 0 the host made k_chunk a multiple of BK; masking says so, which (with the
    // strides above) lets the driver prove the slices 16-byte aligned and load them wide.
    uint k_begin = split * (pc.k_chunk & ~(BK - 1u)), k_end = min(pc.k, k_begin + pc.k_chunk);
    uint abase = bz * sa_batch, bbase = bz * sb_batch;
    // The k extent is k_end, not k: a split's slices read zeros past its end.
    tensorLayoutNV<2> la = createTensorLayoutNV(2);
    tensorLayoutNV<2, CLAMP> la_c = createTensorLayoutNV(2, CLAMP);
    tensorLayoutNV<2> lb = createTensorLayoutNV(2);
    tensorLayoutNV<2, CLAMP> lb_c = createTensorLayoutNV(2, CLAMP);
#if A_T
    la = setTensorLayoutDimensionNV(la, k_end, pc.m);
    la_c = setTensorLayoutDimensionNV(la_c, k_end, pc.m);
#else
    la = setTensorLayoutDimensionNV(la, pc.m, k_end);
    la_c = setTensorLayoutDimensionNV(la_c, pc.m, k_end);
#endif
#if B_T
    lb = setTensorLayoutDimensionNV(lb, pc.n, k_end);
    lb_c = setTensorLayoutDimensionNV(lb_c, pc.n, k_end);
#else
    lb = setTensorLayoutDimensionNV(lb, k_end, pc.n);
    lb_c = setTensorLayoutDimensionNV(lb_c, k_end, pc.n);
#endif
    la = setTensorLayoutStrideNV(la, sa, 1);
    la_c = setTensorLayoutStrideNV(la_c, sa, 1);
    lb = setTensorLayoutStrideNV(lb, sb, 1);
    lb_c = setTensorLayoutStrideNV(lb_c, sb, 1);
    tensorLayoutNV<2, CLAMP> lc = createTensorLayoutNV(2, CLAMP);
    lc = setTensorLayoutDimensionNV(lc, pc.m, pc.n);
    lc = setTensorLayoutStrideNV(lc, pc.n, 1);
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        uint m0 = tm * BM, n0 = tn * BN;
        ACC_T acc = ACC_T(0.0);
        if (m0 + BM <= pc.m && n0 + BN <= pc.n && (k_end - k_begin) % BK == 0u) {
          // Wholly inside: no clamping; UNROLL steps per trip where the count allows.
          uint k0 = k_begin;
          for (; k0 + UNROLL * BK <= k_end; k0 += UNROLL * BK)
            [[unroll]] for (uint j = 0u; j < UNROLL; ++j) STEP(la, lb, k0 + j * BK);
          for (; k0 < k_end; k0 += BK) STEP(la, lb, k0);
        } else {
          for (uint k0 = k_begin; k0 < k_end; k0 += BK) STEP(la_c, lb_c, k0);
        }
        if (pc.splits > 1u) {
          coopMatStoreTensorNV(acc, PartBuf(pc.part_addr).v, (split * pc.batch + bz) * pc.m * pc.n,
                               sliceTensorLayoutNV(lc, m0, BM, n0, BN));
        } else {
#if C16
          coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h =
              coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
          coopMatStoreTensorNV(h, CBuf(pc.c_addr).v, bz * pc.m * pc.n, sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#else
          coopMatStoreTensorNV(acc, CBuf(pc.c_addr).v, bz * pc.m * pc.n, sliceTensorLayoutNV(lc, m0, BM, n0, BN));
#endif
        }
      }
    }
  }
}
