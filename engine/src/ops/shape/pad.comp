// Padding (negative too, and interior) and reversal as a gather: each output element finds
// the input element it comes from, or takes the pad value. Elements move as unsigned words.
// RUN (defined on CPU drivers): runs of that many output elements per invocation.
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

#include "pad_push.h"
layout(push_constant, std430) uniform Push { PadPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ParamsRef { PadParams p; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) writeonly buffer OutBuf { ELEM v[]; };
layout(buffer_reference, std430, buffer_reference_align = ELEM_ALIGN) readonly buffer InBuf { ELEM v[]; };

void main() {
  PadParams prm = ParamsRef(pc.params_addr).p;
  OutBuf o = OutBuf(pc.out_addr);
  InBuf a = InBuf(pc.in_addr);
  ELEM pad = InBuf(pc.value_addr).v[0];
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#ifdef RUN
  // CPU drivers: runs of RUN consecutive output elements per invocation. The axes before the
  // last are resolved once per run (or row), the last one stepped: a division costs a CPU
  // driver tens of cycles per lane.
  if (prm.rank > 0u) {
    uint last = prm.rank - 1u, runs = pc.n / RUN + (pc.n % RUN != 0u ? 1u : 0u);
    uint step = prm.step[last], in_last = prm.in_shape[last], stride = prm.in_stride[last];
    bool flip = (prm.reversed & (1u << last)) != 0u;
    for (uint run = gl_GlobalInvocationID.x; run < runs; run += threads) {
      uint i = run * RUN, end = min(pc.n, i + RUN);
      while (i < end) {
        uint rest = pc.start + i, c = rest % prm.out_shape[last];
        rest /= prm.out_shape[last];
        uint outer = 0u;
        bool outer_inside = true;
        for (int d = int(last) - 1; d >= 0; --d) {
          uint cd = rest % prm.out_shape[d];
          rest /= prm.out_shape[d];
          int x = int(cd) - prm.low[d];
          uint k = uint(x) / prm.step[d];
          outer_inside = outer_inside && x >= 0 && uint(x) == k * prm.step[d] && k < prm.in_shape[d];
          if ((prm.reversed & (1u << d)) != 0u) k = prm.in_shape[d] - 1u - k;
          outer += k * prm.in_stride[d];
        }
        for (uint stop = i + min(end - i, prm.out_shape[last] - c); i < stop; ++i, ++c) {
          int x = int(c) - prm.low[last];
          uint k = step == 1u ? uint(x) : uint(x) / step;
          bool inside = outer_inside && x >= 0 && uint(x) == k * step && k < in_last;
          uint index = outer + (flip ? in_last - 1u - k : k) * stride;
          ELEM v = a.v[inside ? index : 0u];
          o.v[i] = inside ? v : pad;
        }
      }
    }
    return;
  }
#endif
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint rest = pc.start + i, index = 0u;
    bool inside = true;
    for (int d = int(prm.rank) - 1; d >= 0; --d) {
      uint c = rest % prm.out_shape[d];
      rest /= prm.out_shape[d];
      int x = int(c) - prm.low[d];
      uint k = uint(x) / prm.step[d];
      inside = inside && x >= 0 && uint(x) == k * prm.step[d] && k < prm.in_shape[d];
      if ((prm.reversed & (1u << d)) != 0u) k = prm.in_shape[d] - 1u - k;
      index += k * prm.in_stride[d];
    }
    // Every load stays inside the input, whichever way a driver evaluates the select.
    ELEM x = a.v[inside ? index : 0u];
    o.v[i] = inside ? x : pad;
  }
}
