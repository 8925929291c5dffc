// gather, take and take_along_axis: each output word reads its index row (clamped into range,
// as XLA does: no read ever leaves the tensor) and copies one word of the addressed slice. The
// output may span buffer chunks: one launch per chunk, from word g.start.
// Elements move as unsigned words (ELEM: the element, or a wider word when slices allow).
// Defines: ELEM, ELEM_BYTES, ELEM_ALIGN; IDX_STORE, IDX_ALIGN, IDX_SIGNED, IDX_WIDE (64-bit).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#if NXV_STORAGE8
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if NXV_STORAGE16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#endif
#if NXV_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x_id = 0) in;

#include "index_push.h"
#include "index_clamp.glsl"
layout(push_constant, std430) uniform Push { GatherPush g; };
#define pc g.base
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

void main() {
  OutBuf o = OutBuf(pc.out_addr);
  InBuf a = InBuf(pc.in_addr);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint slab = pc.rows * pc.q;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint w = g.start + i;  // the output word (o addresses this launch's chunk)
    uint outer = w / slab, within = w - outer * slab;
    uint row = within / pc.q, q = within - row * pc.q;
    uint first = (pc.per_element != 0u ? w : row) * pc.depth;
    uint at = 0u;
    for (uint k = 0u; k < pc.depth; ++k) at += clamped_index(pc.idx_addr, first + k, pc.dims[k]) * pc.pitch[k];
    o.v[i] = a.v[(outer * pc.a_total + at) * pc.q + q];
  }
}
