// The parameter-block probe's structs (exec/glsl/param_block_probe.comp, test/engine/framework_test.cpp):
// a block of more than 128 bytes, addressed from the push constants.
#ifndef NXV_PARAM_BLOCK_PROBE_H
#define NXV_PARAM_BLOCK_PROBE_H
#include "nxv_shared.h"

#define NXV_PROBE_VALUES 60

NXV_STRUCT(ParamBlockProbeParams) {
  NXV_ADDR out_addr;
  NXV_U32 count;
  NXV_U32 pad;
  NXV_U32 values[NXV_PROBE_VALUES];
};

NXV_STRUCT(ParamBlockProbePush) {
  NXV_ADDR params_addr;
};

#endif
