// Push constants of the dot kernels, declared once for C++ (ops/dot) and GLSL (gemm.comp,
// matvec.comp). Strides are in elements, non-negative, and every index fits 32 bits (the
// family's check and lowering see to both).
#ifndef NXV_GEMM_PUSH_H
#define NXV_GEMM_PUSH_H
#include "nxv_shared.h"

// gemm.comp: C[b, m, n] (row-major) = sum_k A[b, m, k] * B[b, k, n]. With splits > 1 (split-K)
// the workgroups of split s take k in [s * k_chunk, (s + 1) * k_chunk) and write their sums
// to part[((s * batch + b) * m + i) * n + j] (accumulator type) for dot_split_sum.
NXV_STRUCT(GemmPush) {
  NXV_ADDR a_addr;
  NXV_ADDR b_addr;
  NXV_ADDR c_addr;
  NXV_ADDR part_addr;
  NXV_U32 batch;
  NXV_U32 m;
  NXV_U32 n;
  NXV_U32 k;
  NXV_U32 sa_batch;
  NXV_U32 sa_m;
  NXV_U32 sa_k;
  NXV_U32 sb_batch;
  NXV_U32 sb_k;
  NXV_U32 sb_n;
  NXV_U32 splits;   // gemm.comp: 1, or the split-K count
  NXV_U32 k_chunk;  // gemm.comp: k per split
  NXV_ADDR epi_addr;  // with an epilogue: its parameter block (dot_epilogue.h)
};

// matvec.comp: out[b, r] = sum_k MAT[b, r, k] * VEC[b, k] (one of M, N is 1: the other
// operand is the matrix; its rows are the outputs).
// With splits > 1 workgroups of grid z index s take k in [s * k_chunk, (s + 1) * k_chunk)
// and write their sums to part[(s * batch + b) * rows + r] (accumulator type); dot_split_sum
// adds them up.
NXV_STRUCT(MatvecPush) {
  NXV_ADDR mat_addr;
  NXV_ADDR vec_addr;
  NXV_ADDR out_addr;
  NXV_ADDR part_addr;
  NXV_U32 batch;
  NXV_U32 rows;
  NXV_U32 k;
  NXV_U32 smat_batch;
  NXV_U32 smat_row;
  NXV_U32 smat_k;
  NXV_U32 svec_batch;
  NXV_U32 svec_k;
  NXV_U32 splits;
  NXV_U32 k_chunk;
  NXV_U32 sout_batch;  // output element strides: out[b, r] at b * sout_batch + r * sout_row
  NXV_U32 sout_row;
  // Where output (b, r) lies in the dot's [batch, m, n] for its epilogue: the axis b runs
  // along (bits 0-1: 0 batch, 1 m, 2 n) and the axis r runs along (bits 2-3).
  NXV_U32 coords;
  NXV_U32 pad;
  NXV_ADDR epi_addr;  // with an epilogue: its parameter block (dot_epilogue.h)
};

// dot_split_sum.comp: out[i] = sum over s < splits of part[s * n + i], in order of s (then
// the epilogue, where there is one: the multiply kernels then store only partial sums).
NXV_STRUCT(SplitSumPush) {
  NXV_ADDR part_addr;
  NXV_ADDR out_addr;
  NXV_U32 n;
  NXV_U32 splits;
  NXV_ADDR epi_addr;  // with an epilogue: its parameter block (dot_epilogue.h)
};

// dot_split_bf16x3.comp: an f32 operand X[b, r, c] (strides s_batch, s_row, s_col) as bf16
// parts, row-major [batch, rows', cols'] with the contracting axis tripled (axis 2: A's columns
// as hi | hi | lo; axis 1: B's rows as hi ; lo ; hi), so that one GEMM over 3k adds
// hi*hi + hi*lo + lo*hi (dot_bf16x3.hpp).
NXV_STRUCT(SplitBf16x3Push) {
  NXV_ADDR src_addr;
  NXV_ADDR dst_addr;
  NXV_U32 rows;
  NXV_U32 cols;
  NXV_U32 total;  // batch x rows x cols
  NXV_U32 s_batch;
  NXV_U32 s_row;
  NXV_U32 s_col;
  NXV_U32 cols_magic;
  NXV_U32 cols_shift;
  NXV_U32 rows_magic;
  NXV_U32 rows_shift;
};

#endif
