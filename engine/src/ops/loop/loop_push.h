// Push constants of the loop kernel, declared once for C++ (ops/loop/loop_kernel.cpp) and GLSL
// (loop_kernel.comp): the address of a parameter block holding the addresses of the loop's
// inputs, of the values computed when it compiled and of its outputs; and the trips.
#ifndef NXV_LOOP_PUSH_H
#define NXV_LOOP_PUSH_H
#include "nxv_shared.h"

#define NXV_LOOP_MAX_BUFFERS 64  // inputs, computed values and outputs together

NXV_STRUCT(LoopPush) {
  NXV_ADDR params_addr;
  NXV_U32 trips;
  NXV_U32 pad;
};

NXV_STRUCT(LoopParams) {
  NXV_ADDR addr[NXV_LOOP_MAX_BUFFERS];
};

#endif
