// Sorting short rows in shared memory: a bitonic network over P (a power of two >= n) slots per
// row, RPW rows per workgroup, on (key, index) pairs. The pairs are unique, so the network's
// result is the stable order; slots past n hold (KEY_MASK, index >= n) and sort last. The output
// is the values gathered by index (their original bits: -0.0 and NaN payloads survive) or, with
// ARG, the indices in the output type; only the first n_out of each row are written (top_k).
// Defines: WG, P, RPW, RAW, RAW_ALIGN, ARG, OUT_STORE, OUT_ALIGN, STORE_IDX(v), and sort_keys.glsl's.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
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

#include "sort_push.h"
#include "sort_keys.glsl"

layout(push_constant, std430) uniform Params { SortRowsPush pc; };
layout(buffer_reference, std430, buffer_reference_align = RAW_ALIGN) readonly buffer InBuf { RAW v[]; };
#if ARG
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = RAW_ALIGN) writeonly buffer OutBuf { RAW v[]; };
#endif

#define SPAN (P * RPW)
shared KEY s_key[SPAN];
shared uint s_idx[SPAN];

void main() {
  uint tid = gl_LocalInvocationID.x;
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  uint groups = (pc.rows + uint(RPW) - 1u) / uint(RPW);
  for (uint g = gl_WorkGroupID.x; g < groups; g += gl_NumWorkGroups.x) {
    for (uint s = tid; s < uint(SPAN); s += uint(WG)) {
      uint r = g * uint(RPW) + s / uint(P), k = s % uint(P);
      KEY key = KEY_MASK;
      if (r < pc.rows && k < pc.n) {
        uint o = r / pc.inner, i = r - o * pc.inner;
        key = nxv_sort_key(KEY(src.v[o * pc.outer_stride + i * pc.inner_stride + k * pc.n_stride]));
      }
      s_key[s] = key;
      s_idx[s] = k;
    }
    barrier();
    for (uint size = 2u; size <= uint(P); size <<= 1u) {
      for (uint stride = size >> 1u; stride > 0u; stride >>= 1u) {
        for (uint t = tid; t < uint(SPAN) / 2u; t += uint(WG)) {
          uint lo = 2u * t - (t & (stride - 1u)), hi = lo + stride;
          KEY ka = s_key[lo], kb = s_key[hi];
          uint ia = s_idx[lo], ib = s_idx[hi];
          bool greater = ka > kb || (ka == kb && ia > ib);
          bool ascending = (lo & size & (uint(P) - 1u)) == 0u;  // the last merge of every row ascends
          if (greater == ascending) {
            s_key[lo] = kb, s_key[hi] = ka;
            s_idx[lo] = ib, s_idx[hi] = ia;
          }
        }
        barrier();
      }
    }
    for (uint s = tid; s < uint(SPAN); s += uint(WG)) {
      uint r = g * uint(RPW) + s / uint(P), k = s % uint(P);
      if (r < pc.rows && k < pc.n_out) {
        uint o = r / pc.inner, i = r - o * pc.inner;
        uint at = (o * pc.n_out + k) * pc.inner + i;
        uint idx = s_idx[s];
#if ARG
        uint v = idx;
        dst.v[at] = STORE_IDX(v);
#else
        dst.v[at] = src.v[o * pc.outer_stride + i * pc.inner_stride + idx * pc.n_stride];
#endif
      }
    }
    barrier();  // the next rows overwrite s_key and s_idx
  }
}
