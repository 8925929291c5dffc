// Where a kernel stores output element o (its offset in the row-major output) from
// accumulator v: STORE_RESULT(o, v) is STORE_OUT(v), or with EPILOGUE the generated
// nxv_epilogue (ops/elementwise/offset_epilogue.cpp; as dot_epilogue.glsl). Its parameters
// (OffsetEpilogueParams) are NXV_EPILOGUE_PARAMS where the includer defines it (conv_gemm.comp:
// inside its ConvParams), else the block at NXV_EPILOGUE_ADDR (default pc.epi_addr:
// dot_split_sum.comp; reduce.comp's pc.fused_addr).
#ifdef EPILOGUE
#include "offset_epilogue.h"
#include "nxv_fastdiv.glsl"
#ifndef NXV_EPILOGUE_PARAMS
#ifndef NXV_EPILOGUE_ADDR
#define NXV_EPILOGUE_ADDR (pc.epi_addr)
#endif
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer OffsetEpilogueRef { OffsetEpilogueParams p; };
#define NXV_EPILOGUE_PARAMS (OffsetEpilogueRef(NXV_EPILOGUE_ADDR).p)
#endif
#undef NXV_CHAIN_ZERO  // a prologue's chain (reduce.comp) had its own
#define NXV_CHAIN_ZERO (NXV_EPILOGUE_PARAMS.zero)
#include "nxv_generated.glsl"
#undef C
#define STORE_RESULT(i, v) STORE_EPILOGUE(nxv_epilogue(i, v))
#else
#define STORE_RESULT(i, v) STORE_OUT(v)
#endif
