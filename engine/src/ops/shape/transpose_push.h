// Push constants of the tiled transposing copy (ops/shape/transpose.cpp, transpose.comp).
#ifndef NXV_TRANSPOSE_PUSH_H
#define NXV_TRANSPOSE_PUSH_H
#include "nxv_shared.h"

#define NXV_TRANSPOSE_TILE 32
#define NXV_TRANSPOSE_MAX_BATCH 4

NXV_STRUCT(TransposePush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_U32 p_size;        // the axis the input steps through with stride 1
  NXV_U32 l_size;        // the output's last axis
  NXV_U32 l_in_stride;   // its stride in the input
  NXV_U32 p_out_stride;  // the p axis' stride in the output
  NXV_U32 tiles_p;
  NXV_U32 tiles_l;
  NXV_U32 tiles;         // tiles_p * tiles_l * batches
  NXV_U32 batch_rank;
  NXV_U32 batch_shape[NXV_TRANSPOSE_MAX_BATCH];
  NXV_U32 batch_in_stride[NXV_TRANSPOSE_MAX_BATCH];
  NXV_U32 batch_out_stride[NXV_TRANSPOSE_MAX_BATCH];
};

#endif
