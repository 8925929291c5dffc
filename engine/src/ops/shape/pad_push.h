// Push constants and parameter block of the padding gather (ops/shape/pad.cpp, pad.comp):
// each output element reads the input element it comes from, or the pad value.
#ifndef NXV_PAD_PUSH_H
#define NXV_PAD_PUSH_H
#include "nxv_shared.h"

#define NXV_PAD_MAX_RANK 8

NXV_STRUCT(PadParams) {
  NXV_U32 out_shape[NXV_PAD_MAX_RANK];
  NXV_U32 in_shape[NXV_PAD_MAX_RANK];
  NXV_I32 low[NXV_PAD_MAX_RANK];   // elements of padding before the first input element
  NXV_U32 step[NXV_PAD_MAX_RANK];  // interior padding + 1
  NXV_U32 in_stride[NXV_PAD_MAX_RANK];
  NXV_U32 reversed;                // a bit per axis read backwards
  NXV_U32 rank;
};

NXV_STRUCT(PadPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_ADDR value_addr;   // the pad value (one element)
  NXV_ADDR params_addr;  // PadParams
  NXV_U32 n;
  NXV_U32 start;         // linear index of this launch's first element
};

#endif
