// Checks the launch machinery's parameter blocks: out[i] = 2 * values[i] for a block read
// through its device address (taken from the push constants).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "param_block_probe.h"
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ParamsRef { ParamBlockProbeParams p; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutBuf { uint v[]; };
layout(push_constant, std430) uniform Push { ParamBlockProbePush pc; };

void main() {
  ParamsRef params = ParamsRef(pc.params_addr);
  OutBuf o = OutBuf(params.p.out_addr);
  for (uint i = gl_GlobalInvocationID.x; i < params.p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)
    o.v[i] = 2u * params.p.values[i];
}
