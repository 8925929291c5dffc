// Push constants of the loop kernel, declared once for C++ (ops/loop/loop_kernel.cpp) and GLSL
// (loop_kernel.comp): the addresses of the loop's inputs, then of its outputs, and the trips.
#ifndef NXV_LOOP_PUSH_H
#define NXV_LOOP_PUSH_H
#include "nxv_shared.h"

#define NXV_LOOP_MAX_BUFFERS 15  // inputs and outputs together

NXV_STRUCT(LoopPush) {
  NXV_ADDR addr[NXV_LOOP_MAX_BUFFERS];
  NXV_U32 trips;
  NXV_U32 pad;
};

#endif
