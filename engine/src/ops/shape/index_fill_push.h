// Push constants of the index fill (ops/shape/creation.cpp, index_fill.comp): iota's and eye's
// values as u32, before their conversion to the output type.
#ifndef NXV_INDEX_FILL_PUSH_H
#define NXV_INDEX_FILL_PUSH_H
#include "nxv_shared.h"

#define NXV_FILL_IOTA 0u
#define NXV_FILL_EYE 1u

NXV_STRUCT(IndexFillPush) {
  NXV_ADDR out_addr;
  NXV_U32 n;
  NXV_U32 start;  // linear index of this launch's first element
  NXV_U32 mode;
  NXV_U32 inner;  // iota: elements per step along the axis (1 with no axis)
  NXV_U32 dim;    // iota: the axis' size (0 with no axis: the linear index)
  NXV_U32 rows;   // eye: the last two axes
  NXV_U32 cols;
};

#endif
