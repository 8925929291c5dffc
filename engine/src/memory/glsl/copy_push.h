// Push constants of the strided copy (memory/copy.cpp, strided_copy.comp).
#ifndef NXV_COPY_PUSH_H
#define NXV_COPY_PUSH_H
#include "nxv_shared.h"

#define NXV_COPY_MAX_RANK 6

NXV_STRUCT(CopyPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_U32 n;      // elements in this launch
  NXV_U32 rank;   // strided: collapsed rank
  NXV_U32 start;  // strided: linear index of this launch's first element
  NXV_U32 dense;  // 1: the input is dense like the output
  NXV_U32 shape[NXV_COPY_MAX_RANK];
  NXV_U32 stride[NXV_COPY_MAX_RANK];
  NXV_U32 out_stride[NXV_COPY_MAX_RANK];  // OUT_STRIDED: where each axis goes in the output
};

#endif
