// Push constants of the index kernels (ops/index/index.cpp; gather.comp, scatter.comp).
// The addressed tensor is seen as [O, A_1..A_depth, Q] (row-major), the index rows as
// [rows, depth]: gather's output is [O, rows, Q]; scatter adds or puts the updates
// [rows, Q] at [A_1..A_depth] of the target.
#ifndef NXV_INDEX_PUSH_H
#define NXV_INDEX_PUSH_H
#include "nxv_shared.h"

#define NXV_INDEX_MAX_DEPTH 8

NXV_STRUCT(IndexPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;      // gather: the tensor; scatter: the updates
  NXV_ADDR idx_addr;
  NXV_U32 n;             // gather: output words; scatter: lanes (O * Q)
  NXV_U32 rows;          // index rows (per O when per_element)
  NXV_U32 q;             // words per addressed slice
  NXV_U32 depth;         // indices per row
  NXV_U32 per_element;   // take_along_axis: one index per output element, laid out like it
  NXV_U32 a_total;       // product of the addressed extents
  NXV_U32 dims[NXV_INDEX_MAX_DEPTH];   // addressed extents (indices are clamped into them)
  NXV_U32 pitch[NXV_INDEX_MAX_DEPTH];  // their row-major pitches, in slices
};

// gather.comp: one launch per buffer chunk of the output, which starts at output word `start`.
NXV_STRUCT(GatherPush) {
  IndexPush base;
  NXV_U32 start;
};

#endif
