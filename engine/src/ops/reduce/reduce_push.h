// Push constants of the reduce kernel, declared once for C++ (ops/reduce) and GLSL
// (reduce.comp). A pass reduces rows of `reduced` elements laid out as [outer, reduced, inner]
// (element strides below), each row cut into `chunks` pieces of `chunk_len`; it writes one
// value per (outer, chunk, inner), row-major: partial results when chunks > 1, else the result.
#ifndef NXV_REDUCE_PUSH_H
#define NXV_REDUCE_PUSH_H
#include "nxv_shared.h"

NXV_STRUCT(ReducePush) {
  NXV_ADDR in_addr;   // the tensor, or the partial results of the pass before
  NXV_ADDR out_addr;  // the result, or partial results
  NXV_ADDR aux_addr;  // argmax/argmin from partial indices: the tensor they index
  NXV_ADDR fused_addr;  // the parameters of a fused chain: the final pass's epilogue (OffsetEpilogueParams)
                       // or the first pass's prologue (ReducePrologueParams)
  NXV_U32 outer;
  NXV_U32 reduced;
  NXV_U32 inner;
  NXV_U32 chunks;
  NXV_U32 chunk_len;
  NXV_U32 rows;  // outer * chunks * inner
  NXV_U32 outer_stride;
  NXV_U32 reduced_stride;
  NXV_U32 inner_stride;
  NXV_U32 aux_outer_stride;
  NXV_U32 aux_reduced_stride;
  NXV_U32 aux_inner_stride;
};

#endif
