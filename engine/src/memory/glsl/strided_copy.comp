// Copies any view into a row-major tensor (OUT_STRIDED: into any view), bit for bit: elements move as unsigned words of
// their size (ELEM: uint8_t, uint16_t, uint, uvec2, uvec4), so NaN payloads and bf16 or f8
// patterns survive and no arithmetic type is needed. RUN (defined on CPU drivers): strided
// launches in runs of that many elements per invocation.
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

#include "copy_push.h"
layout(push_constant, std430) uniform Params { CopyPush pc; };

layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

void main() {
  OutBuf o = OutBuf(pc.out_addr);
  InBuf a = InBuf(pc.in_addr);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef RUN
  // CPU drivers: strided launches in runs of RUN consecutive elements per invocation, the
  // coordinates divided out once per run (or row of the last axis) and then stepped (as the
  // elementwise kernel's runs: a division costs a CPU driver tens of cycles per lane).
  if (pc.dense == 0u) {
    uint runs = pc.n / RUN + (pc.n % RUN != 0u ? 1u : 0u);
    uint last = max(pc.rank, 1u) - 1u, step = pc.stride[last];
#if OUT_STRIDED
    uint out_step = pc.out_stride[last];
#else
    uint out_step = 1u;
#endif
    for (uint run = gl_GlobalInvocationID.x; run < runs; run += threads) {
      uint i = run * RUN, end = min(pc.n, i + RUN);
      while (i < end) {
        uint rest = pc.start + i, left = end - i, index = 0u, out_index = i;
#if OUT_STRIDED
        out_index = 0u;
#endif
        for (int d = int(pc.rank) - 1; d >= 0; --d) {
          uint c = rest % pc.shape[d];
          rest /= pc.shape[d];
          if (d == int(last)) left = min(left, pc.shape[d] - c);
          index += c * pc.stride[d];
#if OUT_STRIDED
          out_index += c * pc.out_stride[d];
#endif
        }
        for (uint stop = i + left; i < stop; ++i, index += step, out_index += out_step) o.v[out_index] = a.v[index];
      }
    }
    return;
  }
#endif
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint index = i * pc.stride[0], out_index = i;
    if (pc.dense == 0u) {
      uint rest = pc.start + i;
      index = 0u;
#if OUT_STRIDED
      out_index = 0u;
#endif
      for (int d = int(pc.rank) - 1; d >= 0; --d) {
        uint c = rest % pc.shape[d];
        rest /= pc.shape[d];
        index += c * pc.stride[d];
#if OUT_STRIDED
        out_index += c * pc.out_stride[d];
#endif
      }
    }
    o.v[out_index] = a.v[index];
  }
}
