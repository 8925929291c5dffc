// iota's and eye's values as u32 (the index along an axis, or 1 on the diagonal of the last
// two axes); the output type's conversion follows as Nx's as_type.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "index_fill_push.h"
layout(push_constant, std430) uniform Push { IndexFillPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutBuf { uint v[]; };

void main() {
  OutBuf o = OutBuf(pc.out_addr);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint at = pc.start + i, value;
    if (pc.mode == NXV_FILL_EYE) {
      value = (at / pc.cols) % pc.rows == at % pc.cols ? 1u : 0u;
    } else {
      value = at / pc.inner;
      if (pc.dim != 0u) value %= pc.dim;
    }
    o.v[i] = value;
  }
}
