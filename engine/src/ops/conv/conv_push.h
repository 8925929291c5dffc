// Push constants and parameter block of conv's implicit GEMM (conv_gemm.comp), declared once
// for C++ (ops/conv) and GLSL. Per group g (grid z, with split-K splits):
//   C[m, n] = sum_k A[m, k] * B[k, n],  m = (batch item, output position), n = filter in the
//   group, k = (kernel position, channel in the group), channels innermost;
// A is gathered from the input on the fly, B is the kernel read as a strided matrix
// [group, k, n]. Element strides fit 31 bits; divisions by run-time extents go through the
// multipliers of kernels/fast_division.hpp.
#ifndef NXV_CONV_PUSH_H
#define NXV_CONV_PUSH_H
#include "nxv_shared.h"
// GLSL finds included files by name; C++ by path.
#ifdef __cplusplus
#include "ops/elementwise/offset_epilogue.h"
#else
#include "offset_epilogue.h"
#endif

#define NXV_CONV_MAX_SPATIAL 8

NXV_STRUCT(ConvPush) {
  NXV_ADDR in_addr;
  NXV_ADDR b_addr;
  NXV_ADDR c_addr;
  NXV_ADDR part_addr;    // split-K: part[split * total + output offset] (accumulator type)
  NXV_ADDR params_addr;  // ConvParams, then the kernel-position table
  NXV_U32 m;             // rows: output batch items x output positions
  NXV_U32 n;             // filters per group
  NXV_U32 k;             // channels per group x kernel positions
  NXV_U32 groups;
  NXV_U32 splits;
  NXV_U32 k_chunk;
  NXV_U32 sb_group;      // B's strides: per group, along k, along n
  NXV_U32 sb_k;
  NXV_U32 sb_n;
  NXV_U32 total;         // output elements
};

// Spatial axes d < NR (the kernel's compile-time rank). Input positions are in the dilated
// input's coordinates (input_dilation: only multiples of idil[d] hold input values).
NXV_STRUCT(ConvParams) {
  NXV_I32 in_n;          // input strides: batch, channel, one group (batch or channel groups)
  NXV_I32 in_c;
  NXV_I32 in_group;
  NXV_U32 ci;            // channels per group, and its multiplier
  NXV_U32 ci_magic;
  NXV_U32 ci_shift;
  NXV_U32 positions;     // output positions per batch item, and its multiplier
  NXV_U32 pos_magic;
  NXV_U32 pos_shift;
  NXV_U32 out_n;         // output strides: batch, filter
  NXV_U32 out_o;
  NXV_U32 out_ext[NXV_CONV_MAX_SPATIAL];  // output extents, with multipliers, and strides
  NXV_U32 out_magic[NXV_CONV_MAX_SPATIAL];
  NXV_U32 out_shift[NXV_CONV_MAX_SPATIAL];
  NXV_U32 out_sp[NXV_CONV_MAX_SPATIAL];
  NXV_I32 in_ext[NXV_CONV_MAX_SPATIAL];   // the dilated input's extents: (size - 1) * idil + 1
  NXV_I32 in_sp[NXV_CONV_MAX_SPATIAL];    // input strides
  NXV_I32 stride[NXV_CONV_MAX_SPATIAL];
  NXV_I32 pad_lo[NXV_CONV_MAX_SPATIAL];
  NXV_U32 idil[NXV_CONV_MAX_SPATIAL];     // input dilations, with multipliers
  NXV_U32 idil_magic[NXV_CONV_MAX_SPATIAL];
  NXV_U32 idil_shift[NXV_CONV_MAX_SPATIAL];
  OffsetEpilogueParams epi;  // read by conv_gemm.comp where it has an epilogue
};

// After ConvParams, one row of NR + 1 ints per kernel position (row-major over the kernel's
// spatial extents): the input offset of the position when the input is not dilated
// (sum of pos[d] * kdil[d] * in_sp[d]), then pos[d] * kdil[d] per axis.
#define NXV_CONV_TABLE_ROW(nr) ((nr) + 1)

#endif
