// A transposing copy through shared memory: each workgroup moves TILE x TILE tiles whose reads
// run along the input's stride-1 axis and whose writes run along the output's last axis, so both
// sides are coalesced. Elements move as unsigned words of their size (bit for bit).
// With VEC > 1 (elements of at most 4 bytes, vector-aligned strides) each thread moves VEC
// neighbouring elements per global load or store; a warp covers 8 vectors of 4 rows, which with
// rows padded by one word keeps its shared-memory accesses on 32 distinct banks in both phases.
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
#ifndef VEC
#define VEC 1
#endif
#if VEC > 1
#define VT (TILE / VEC)
layout(local_size_x = VT * ROWS) in;
#else
layout(local_size_x = TILE, local_size_y = ROWS) in;
#endif
layout(push_constant, std430) uniform Params { TransposePush pc; };

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

#if VEC > 1
#if ELEM_BYTES == 4
#define VWORD uvec4
#define VGET(x, c) (x)[c]
#define VSET(x, c, e) (x)[c] = (e)
#elif ELEM_BYTES == 2
#define VWORD uvec2
#define VGET(x, c) bitfieldExtract((x)[(c) >> 1], 16 * ((c) & 1), 16)
#define VSET(x, c, e) (x)[(c) >> 1] = bitfieldInsert((x)[(c) >> 1], (e), 16 * ((c) & 1), 16)
#else
#define VWORD uint
#define VGET(x, c) bitfieldExtract((x), 8 * (c), 8)
#define VSET(x, c, e) (x) = bitfieldInsert((x), (e), 8 * (c), 8)
#endif
layout(buffer_reference, std430, buffer_reference_align = ELEM_BYTES * VEC) writeonly buffer OutVec { VWORD v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_BYTES * VEC) readonly buffer InVec { VWORD v[]; };
#endif

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
#if VEC > 1
    // Input rows l0 + j (VEC elements from p0 + vc each), output rows p0 + j (from l0 + vc).
    uint i = gl_LocalInvocationIndex, w = i >> 5u;
    uint vc = ((i & 7u) + 8u * (w % (VT / 8u))) * VEC, r = ((i >> 3u) & 3u) + 4u * (w / (VT / 8u));
    for (uint j = r; j < TILE; j += ROWS) {
      uint l = l0 + j, p = p0 + vc;
      if (l >= pc.l_size) continue;
      uint at = in_base + l * pc.l_in_stride + p;
      if (p + VEC <= pc.p_size) {
        VWORD x = InVec(pc.in_addr).v[at / VEC];
        for (int c = 0; c < VEC; ++c) tile[j][vc + c] = uint(VGET(x, c));
      } else {
        for (uint c = 0; c < VEC; ++c)
          if (p + c < pc.p_size) tile[j][vc + c] = TO_SHARED(a.v[at + c]);
      }
    }
    barrier();
    for (uint j = r; j < TILE; j += ROWS) {
      uint p = p0 + j, l = l0 + vc;
      if (p >= pc.p_size) continue;
      uint at = out_base + p * pc.p_out_stride + l;
      if (l + VEC <= pc.l_size) {
        VWORD x = VWORD(0);
        for (int c = 0; c < VEC; ++c) VSET(x, c, tile[vc + c][j]);
        OutVec(pc.out_addr).v[at / VEC] = x;
      } else {
        for (uint c = 0; c < VEC; ++c)
          if (l + c < pc.l_size) o.v[at + c] = FROM_SHARED(tile[vc + c][j]);
      }
    }
#else
    for (uint j = ly; j < TILE; j += ROWS) {
      uint l = l0 + j, p = p0 + lx;
      if (l < pc.l_size && p < pc.p_size) tile[j][lx] = TO_SHARED(a.v[in_base + l * pc.l_in_stride + p]);
    }
    barrier();
    for (uint j = ly; j < TILE; j += ROWS) {
      uint p = p0 + j, l = l0 + lx;
      if (l < pc.l_size && p < pc.p_size) o.v[out_base + p * pc.p_out_stride + l] = FROM_SHARED(tile[lx][j]);
    }
#endif
    barrier();
  }
}
