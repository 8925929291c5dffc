// A transposing copy through shared memory: each workgroup moves 32x32 tiles whose reads run
// along the input's stride-1 axis and whose writes run along the output's last axis, so both
// sides are coalesced. Elements move as unsigned words of their size (bit for bit).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#if ELEM_BYTES == 1
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#elif ELEM_BYTES == 2
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif

#include "transpose_push.h"
#ifndef TILE
#define TILE NXV_TRANSPOSE_TILE
#endif
#ifndef ROWS
#define ROWS 8
#endif
layout(local_size_x = TILE, local_size_y = ROWS) in;
layout(push_constant, std430) uniform Params { TransposePush pc; };

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

#if ELEM_BYTES <= 4
shared uint tile[TILE][TILE + 1];
#define TO_SHARED(x) uint(x)
#define FROM_SHARED(x) ELEM(x)
#else
shared ELEM tile[TILE][TILE + 1];
#define TO_SHARED(x) (x)
#define FROM_SHARED(x) (x)
#endif

void main() {
  OutBuf o = OutBuf(pc.out_addr);
  InBuf a = InBuf(pc.in_addr);
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  for (uint t = gl_WorkGroupID.x; t < pc.tiles; t += gl_NumWorkGroups.x) {
    uint tl = t % pc.tiles_l, rest = t / pc.tiles_l;
    uint tp = rest % pc.tiles_p, b = rest / pc.tiles_p;
    uint in_base = 0u, out_base = 0u;
    for (int d = int(pc.batch_rank) - 1; d >= 0; --d) {
      uint c = b % pc.batch_shape[d];
      b /= pc.batch_shape[d];
      in_base += c * pc.batch_in_stride[d];
      out_base += c * pc.batch_out_stride[d];
    }
    uint p0 = tp * TILE, l0 = tl * TILE;
    for (uint j = ly; j < TILE; j += ROWS) {
      uint l = l0 + j, p = p0 + lx;
      if (l < pc.l_size && p < pc.p_size) tile[j][lx] = TO_SHARED(a.v[in_base + l * pc.l_in_stride + p]);
    }
    barrier();
    for (uint j = ly; j < TILE; j += ROWS) {
      uint p = p0 + j, l = l0 + lx;
      if (l < pc.l_size && p < pc.p_size) o.v[out_base + p * pc.p_out_stride + l] = FROM_SHARED(tile[lx][j]);
    }
    barrier();
  }
}
