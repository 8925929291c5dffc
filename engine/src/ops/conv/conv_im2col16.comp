// conv's A written out for dot's GEMM (conv_im2col.cpp), 16 bytes per load and store
// (conv_gather16.glsl): row-major [m, k] at c_addr, one feature and batch group. LANES
// invocations walk one row's k/V vectors, so a subgroup writes whole rows' spans and reads
// one kernel position's channels at a time. Defines: V, NR, IDIL, WG, LANES.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "nxv_fastdiv.glsl"
#include "conv_push.h"

layout(push_constant, std430) uniform Params { ConvPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ParamBuf {
  ConvParams p;
  int table[];  // NXV_CONV_TABLE_ROW(NR) ints per kernel position
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Out16 { uvec4 v[]; };

#include "conv_gather16.glsl"

const uint ROWS = WG / LANES;  // rows per workgroup at a time

void main() {
  ParamBuf P = ParamBuf(pc.params_addr);
  Out16 out16 = Out16(pc.c_addr);
  uint lane = gl_LocalInvocationID.x % LANES, row = gl_LocalInvocationID.x / LANES;
  uint vectors = pc.k / V;
  for (uint m0 = gl_WorkGroupID.x * ROWS; m0 < pc.m; m0 += gl_NumWorkGroups.x * ROWS) {
    uint gm = m0 + row;
    if (gm < pc.m) {
      GatherRow r = gather_row(P, gm, pc.m);
      for (uint j = lane; j < vectors; j += LANES) out16.v[gm * vectors + j] = gather16(pc.in_addr, P, r, gather_k(P, j * V), true);
    }
  }
}
