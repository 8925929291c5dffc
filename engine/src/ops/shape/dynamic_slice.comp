// slice and put_slice with start indices in device memory: each invocation reads the starts
// (any integer type, read as 32-bit words), clamps them into [0, dim - length] as Nx does and
// copies region elements. slice: out[i] = in[starts + region(i)]; put_slice: out[starts +
// region(i)] = update[region(i)]. Elements move as unsigned words.
// A big side over several buffer chunks is addressed element by element through its chunk
// table, with 64-bit offsets (as uvec2: the kernel needs no 64-bit integer support).
// Defines: ELEM, ELEM_BYTES, ELEM_ALIGN.
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

layout(local_size_x_id = 0) in;

#include "dynamic_slice_push.h"
layout(push_constant, std430) uniform Push { DynamicSlicePush pc; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ParamsRef { DynamicSliceParams p; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Words { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

// The start of axis d: its integer (sign-extended to 64 bits as hi:lo) clamped into [0, limit].
uint start_of(DynamicSliceParams prm, int d) {
  uint kind = prm.start_kind[d], limit = prm.limit[d];
  if (kind == 0u) return prm.static_start[d];
  uint bytes = kind & 15u, shift = (kind >> 16) & 31u;
  bool signed_ = (kind & 256u) != 0u;
  Words w = Words(prm.start_addr[d]);
  uint lo = w.v[0] >> shift, hi = 0u;
  if (bytes == 8u) {
    hi = w.v[1];
  } else if (bytes < 4u) {
    uint bits = bytes * 8u, mask = (1u << bits) - 1u;
    lo &= mask;
    if (signed_ && (lo >> (bits - 1u)) != 0u) lo |= ~mask, hi = 0xFFFFFFFFu;
  } else if (signed_ && (lo >> 31) != 0u) {
    hi = 0xFFFFFFFFu;
  }
  if (signed_ && (hi >> 31) != 0u) return 0u;
  return hi != 0u ? limit : min(lo, limit);
}

uvec2 add64(uvec2 a, uvec2 b) {
  uint carry;
  uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 mul64(uint a, uint b) {
  uint hi, lo;
  umulExtended(a, b, hi, lo);
  return uvec2(lo, hi);
}
// The address of the big side's element `big_offset + i` (i as lo, hi).
uvec2 chunked_address(DynamicSliceParams prm, uvec2 i) {
  uvec2 g = add64(prm.big_offset, i);
  uint s = prm.chunk_shift, chunk;
  uvec2 within;
  if (s < 32u) {
    chunk = (g.x >> s) | (g.y << (32u - s));
    within = uvec2(g.x & ((1u << s) - 1u), 0u);
  } else {
    chunk = g.y >> (s - 32u);
    within = uvec2(g.x, g.y & ((1u << (s - 32u)) - 1u));
  }
  uvec2 bytes = add64(mul64(within.x, ELEM_BYTES), uvec2(0u, within.y * ELEM_BYTES));
  return add64(prm.big_chunk[chunk], bytes);
}

void main() {
  DynamicSliceParams prm = ParamsRef(pc.params_addr).p;
  OutBuf o = OutBuf(pc.out_addr);
  InBuf a = InBuf(pc.in_addr);
  uint starts[NXV_DYNAMIC_SLICE_MAX_RANK];
  uint base = 0u;
  for (int d = 0; d < int(prm.rank); ++d) {
    starts[d] = start_of(prm, d);
    base += starts[d] * prm.start_stride[d];
  }
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (prm.chunk_shift != 0u) {
    uvec2 base64 = uvec2(0u);
    for (int d = 0; d < int(prm.rank); ++d) base64 = add64(base64, mul64(starts[d], prm.start_stride[d]));
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
      uint rest = pc.start + i, dst = 0u;
      uvec2 src = uvec2(0u);
      for (int d = int(prm.rank) - 1; d >= 0; --d) {
        uint c = rest % prm.shape[d];
        rest /= prm.shape[d];
        src = add64(src, mul64(c, prm.src_stride[d]));
        dst += c * prm.dst_stride[d];
      }
      // put_slice: the big side is the output, reached at starts + region(i) (dst pitches);
      // slice: the source, at starts + region(i) (src pitches).
      if (prm.put != 0u) {
        OutBuf(chunked_address(prm, add64(base64, uvec2(dst, 0u)))).v[0] = a.v[src.x];
      } else {
        o.v[i] = InBuf(chunked_address(prm, add64(base64, src))).v[0];
      }
    }
    return;
  }
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint rest = pc.start + i, src = 0u, dst = 0u;
    for (int d = int(prm.rank) - 1; d >= 0; --d) {
      uint c = rest % prm.shape[d];
      rest /= prm.shape[d];
      src += c * prm.src_stride[d];
      dst += c * prm.dst_stride[d];
    }
    if (prm.put != 0u) o.v[base + dst] = a.v[src];
    else o.v[i] = a.v[base + src];
  }
}
