// The parameter block of a dot's epilogue (ops/dot/dot_epilogue.cpp), declared once for C++
// and GLSL; the dot kernels' push constants hold its address (epi_addr in gemm_push.h).
// Output element i (row-major [batch, m, n]) reads the epilogue's tensor t at
// b * s[t][0] + r * s[t][1] + c * s[t][2] (b, r, c: its coordinates); strides are in
// elements, non-negative, and every index fits 32 bits.
#ifndef NXV_DOT_EPILOGUE_H
#define NXV_DOT_EPILOGUE_H
#include "nxv_shared.h"
// GLSL finds included files by name; C++ by path.
#ifdef __cplusplus
#include "ops/elementwise/store_epilogue.h"
#else
#include "store_epilogue.h"
#endif

NXV_STRUCT(DotEpilogueParams) {
  NXV_ADDR addr[NXV_EPILOGUE_TENSORS];  // the chain's inputs 1.., where it has them
  NXV_U32 m;
  NXV_U32 n;
  NXV_U32 s[NXV_EPILOGUE_TENSORS][3];  // tensor t's strides along batch, m and n
  NXV_U32 zero;  // 0: the chain's roundings go through it (a value the compiler cannot see)
  NXV_U32 pad;
};

#endif
