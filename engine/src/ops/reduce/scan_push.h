// Push constants of the scan kernel (scan.comp), declared once for C++ (ops/reduce/scan.cpp)
// and GLSL. The tensor is [outer, n, inner] with element strides; the result is row-major.
#ifndef NXV_SCAN_PUSH_H
#define NXV_SCAN_PUSH_H
#include "nxv_shared.h"

NXV_STRUCT(ScanPush) {
  NXV_ADDR in_addr;
  NXV_ADDR out_addr;
  NXV_U32 outer;
  NXV_U32 n;
  NXV_U32 inner;
  NXV_U32 reverse;  // 1: accumulate from the end
  NXV_U32 outer_stride;
  NXV_U32 n_stride;
  NXV_U32 inner_stride;
};

#endif
