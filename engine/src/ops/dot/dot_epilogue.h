// The parameter block of a dot's epilogue (ops/dot/dot_epilogue.cpp), declared once for C++
// and GLSL; the dot kernels' push constants hold its address (epi_addr in gemm_push.h).
// Output element i (row-major [batch, m, n]) reads the epilogue's tensor x at
// b * sx_batch + r * sx_m + c * sx_n (b, r, c: its coordinates), y likewise; strides are in
// elements, non-negative, and every index fits 32 bits.
#ifndef NXV_DOT_EPILOGUE_H
#define NXV_DOT_EPILOGUE_H
#include "nxv_shared.h"

NXV_STRUCT(DotEpilogueParams) {
  NXV_ADDR x_addr;  // the chain's input 1, where it has one
  NXV_ADDR y_addr;  // its input 2, where it has one
  NXV_U32 m;
  NXV_U32 n;
  NXV_U32 sx_batch;
  NXV_U32 sx_m;
  NXV_U32 sx_n;
  NXV_U32 sy_batch;
  NXV_U32 sy_m;
  NXV_U32 sy_n;
  NXV_U32 zero;  // 0: the chain's roundings go through it (a value the compiler cannot see)
  NXV_U32 pad;
};

#endif
