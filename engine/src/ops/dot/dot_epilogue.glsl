// Where a dot kernel stores output element i (row-major [batch, m, n]) from accumulator v:
// STORE_RESULT(i, v) is STORE_OUT(v), or with EPILOGUE the generated nxv_epilogue; where the
// kernel knows the element's batch, row and column, STORE_RESULT_AT(bz, row, col, v) spares the
// epilogue the divisions that find them from i; it is STORE_REG(RESULT_AT(bz, row, col, v)), the
// result a register of type RESULT_REG until it is stored
// (ops/dot/dot_epilogue.cpp: the product rounded to its type, then the elementwise chain, its
// result converted where it is stored by STORE_EPILOGUE, as elementwise.comp stores: a 16-bit
// value never lives in a register). Included after the push constants `pc` (with epi_addr).
#ifdef EPILOGUE
#include "dot_epilogue.h"
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer DotEpilogueRef { DotEpilogueParams p; };
#define NXV_CHAIN_ZERO (DotEpilogueRef(pc.epi_addr).p.zero)
#include "nxv_generated.glsl"
#undef C
#define STORE_RESULT(i, v) STORE_EPILOGUE(nxv_epilogue(i, v))
#define RESULT_REG NXV_EPILOGUE_RESULT
#define RESULT_AT(bz, row, col, v) nxv_epilogue_at(bz, row, col, v)
#define STORE_REG(x) STORE_EPILOGUE(x)
#else
#define STORE_RESULT(i, v) STORE_OUT(v)
#define RESULT_REG ACC
#define RESULT_AT(bz, row, col, v) (v)
#define STORE_REG(x) STORE_OUT(x)
#endif
#define STORE_RESULT_AT(bz, row, col, v) STORE_REG(RESULT_AT(bz, row, col, v))
