// The parameter block of an offset epilogue (ops/elementwise/offset_epilogue.hpp), declared
// once for C++ and GLSL: output element o (its offset in the row-major output) reads the
// epilogue's tensor t at the sum over d < rank of coordinate d times s[t][d], o decomposed over
// ext[] (the output's axes, adjacent ones merged where every tensor's strides allow). Strides
// in elements, non-negative, indices below 2^31.
#ifndef NXV_OFFSET_EPILOGUE_H
#define NXV_OFFSET_EPILOGUE_H
#include "nxv_shared.h"
// GLSL finds included files by name; C++ by path.
#ifdef __cplusplus
#include "ops/elementwise/store_epilogue.h"
#else
#include "store_epilogue.h"
#endif

#define NXV_OFFSET_EPILOGUE_AXES 10

NXV_STRUCT(OffsetEpilogueParams) {
  NXV_ADDR addr[NXV_EPILOGUE_TENSORS];  // the chain's inputs 1.., where it has them
  NXV_U32 zero;     // 0: the chain's roundings go through it (a value the compiler cannot see)
  NXV_U32 rank;     // also compiled into the generated code (offset_epilogue.cpp)
  NXV_U32 ext[NXV_OFFSET_EPILOGUE_AXES];
  NXV_U32 ext_magic[NXV_OFFSET_EPILOGUE_AXES];  // division by ext[d] (kernels/fast_division.hpp)
  NXV_U32 ext_shift[NXV_OFFSET_EPILOGUE_AXES];
  NXV_U32 s[NXV_EPILOGUE_TENSORS][NXV_OFFSET_EPILOGUE_AXES];  // tensor t's stride along axis d
};

#endif
