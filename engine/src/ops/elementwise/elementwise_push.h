// Push constants of the elementwise kernel, declared once for C++ (ops/elementwise) and GLSL
// (elementwise.comp). Addresses are 64-bit (uvec2 in GLSL: same size and alignment).
#ifndef NXV_ELEMENTWISE_PUSH_H
#define NXV_ELEMENTWISE_PUSH_H
#include "nxv_shared.h"

#define NXV_EW_MAX_RANK 6   // collapsed axes per launch, one or two inputs
#define NXV_EW_MAX_RANK3 4  // with three inputs (select, clip, fused chains)

NXV_STRUCT(ElementwisePush) {
  NXV_ADDR out_addr;
  NXV_ADDR a_addr;
  NXV_ADDR b_addr;
  NXV_U32 n;      // elements in this launch
  NXV_U32 rank;   // strided: collapsed rank
  NXV_U32 start;  // strided: linear index of this launch's first output element
  NXV_U32 dense;  // strided: bit 0/1 set when a/b is dense like the output (indexed by i)
  NXV_U32 shape[NXV_EW_MAX_RANK];
  NXV_U32 a_stride[NXV_EW_MAX_RANK];  // linear: a_stride[0] is 1 (dense) or 0 (scalar)
  NXV_U32 b_stride[NXV_EW_MAX_RANK];
};

NXV_STRUCT(Elementwise3Push) {
  NXV_ADDR out_addr;
  NXV_ADDR a_addr;
  NXV_ADDR b_addr;
  NXV_ADDR c_addr;
  NXV_U32 n;
  NXV_U32 rank;
  NXV_U32 start;
  NXV_U32 dense;
  NXV_U32 shape[NXV_EW_MAX_RANK3];
  NXV_U32 a_stride[NXV_EW_MAX_RANK3];
  NXV_U32 b_stride[NXV_EW_MAX_RANK3];
  NXV_U32 c_stride[NXV_EW_MAX_RANK3];
};

#define NXV_EW_MAX_WIDE 8  // operands of elementwise_wide.comp (dense or single elements)

NXV_STRUCT(ElementwiseWidePush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr[NXV_EW_MAX_WIDE];
  NXV_U32 n;        // elements in this launch
  NXV_U32 scalars;  // bit k set: operand k is a single element (read at index 0)
};

#endif
