// The parameter block of a reduction's prologue (reduce_prologue.hpp), declared once for C++
// and GLSL: the chain's input j (a, b, c) of element k of row (o, i) of the first pass's
// [outer, reduced, inner] is at o * so + k * sr + i * si of its tensor (element strides,
// non-negative, indices below 2^32).
#ifndef NXV_REDUCE_PROLOGUE_H
#define NXV_REDUCE_PROLOGUE_H
#include "nxv_shared.h"

NXV_STRUCT(ReducePrologueParams) {
  NXV_ADDR a_addr;
  NXV_ADDR b_addr;  // where the chain has a second input
  NXV_ADDR c_addr;  // and a third
  NXV_U32 so_a;
  NXV_U32 sr_a;
  NXV_U32 si_a;
  NXV_U32 so_b;
  NXV_U32 sr_b;
  NXV_U32 si_b;
  NXV_U32 so_c;
  NXV_U32 sr_c;
  NXV_U32 si_c;
  NXV_U32 zero;  // 0: the chain's roundings go through it (a value the compiler cannot see)
};

#endif
