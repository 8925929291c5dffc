// Push constants of the sort family's kernels, declared once for C++ (ops/sort/*.cpp) and GLSL.
#ifndef NXV_SORT_PUSH_H
#define NXV_SORT_PUSH_H
#include "nxv_shared.h"

// sort_rows.comp: rows of [outer, n, inner] (element strides), one workgroup sorting one or
// more whole rows in shared memory; the result is row-major [outer, n_out, inner], the first
// n_out of each sorted row (n, or top_k's k).
NXV_STRUCT(SortRowsPush) {
  NXV_ADDR in_addr;
  NXV_ADDR out_addr;
  NXV_U32 rows;  // outer * inner
  NXV_U32 n;
  NXV_U32 inner;
  NXV_U32 outer_stride;
  NXV_U32 n_stride;
  NXV_U32 inner_stride;
  NXV_U32 n_out;
};

// radix_histogram/radix_scan/radix_scatter.comp: one 8-bit digit pass of an LSD radix sort of
// `rows` dense rows of `n` keys, cut into tiles of `tile` keys (`tiles_per_row` per row).
// hist[(row * 256 + digit) * tiles_per_row + tile]: the tile's count of the digit, then (after
// the scan) the exclusive prefix over the row's tiles; bases[row * 256 + digit]: the digit's
// total in the row, then (after the base scan) the exclusive prefix over digits.
NXV_STRUCT(RadixPush) {
  NXV_ADDR keys_in;
  NXV_ADDR idx_in;
  NXV_ADDR keys_out;
  NXV_ADDR idx_out;
  NXV_ADDR hist;
  NXV_ADDR bases;
  NXV_U32 rows;
  NXV_U32 n;
  NXV_U32 tiles_per_row;
  NXV_U32 tile;
  NXV_U32 shift;     // the digit: bits [shift, shift + 8) of the key
  NXV_U32 segments;  // radix_scan: rows * 256
};

#endif
