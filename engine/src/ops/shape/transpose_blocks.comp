// A transposing copy for CPU drivers: each invocation moves a 4 x 4 block in registers, four
// vector loads along the input's stride-1 axis and four vector stores along the output's last
// axis, with no shared memory and no barrier (llvmpipe runs a workgroup's barriers as switches
// between its invocations, and the shared-memory tiles of transpose.comp cost it more than the
// copy). Consecutive invocations take consecutive blocks along the output's last axis, so their
// stores are contiguous. Elements of at most 4 bytes, moved as bits; row starts on both sides
// are multiples of 4 elements (transpose.cpp checks), blocks at the edges go element by element.
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
layout(local_size_x_id = 0) in;
layout(push_constant, std430) uniform Params { TransposePush pc; };

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

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
layout(buffer_reference, std430, buffer_reference_align = ELEM_BYTES * 4) writeonly buffer OutVec { VWORD v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_BYTES * 4) readonly buffer InVec { VWORD v[]; };

void main() {
  // Here pc.tiles_p and pc.tiles_l count blocks of 4, pc.tiles all blocks.
  uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint t = gl_GlobalInvocationID.x; t < pc.tiles; t += step) {
    uint bl = t % pc.tiles_l, rest = t / pc.tiles_l;
    uint bp = rest % pc.tiles_p, b = rest / pc.tiles_p;
    uint in_base = 0u, out_base = 0u;
    for (int d = int(pc.batch_rank) - 1; d >= 0; --d) {
      uint c = b % pc.batch_shape[d];
      b /= pc.batch_shape[d];
      in_base += c * pc.batch_in_stride[d];
      out_base += c * pc.batch_out_stride[d];
    }
    uint p0 = bp * 4u, l0 = bl * 4u;
    if (p0 + 4u <= pc.p_size && l0 + 4u <= pc.l_size) {
      VWORD r[4];
      for (int j = 0; j < 4; ++j) r[j] = InVec(pc.in_addr).v[(in_base + (l0 + uint(j)) * pc.l_in_stride + p0) / 4u];
      for (int i = 0; i < 4; ++i) {
        VWORD x = VWORD(0);
        for (int j = 0; j < 4; ++j) VSET(x, j, VGET(r[j], i));
        OutVec(pc.out_addr).v[(out_base + (p0 + uint(i)) * pc.p_out_stride + l0) / 4u] = x;
      }
    } else {
      for (uint i = 0u; i < 4u && p0 + i < pc.p_size; ++i)
        for (uint j = 0u; j < 4u && l0 + j < pc.l_size; ++j)
          OutBuf(pc.out_addr).v[out_base + (p0 + i) * pc.p_out_stride + l0 + j] =
              InBuf(pc.in_addr).v[in_base + (l0 + j) * pc.l_in_stride + p0 + i];
    }
  }
}
