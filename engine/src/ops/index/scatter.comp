// indexed_add and indexed_put on a copy of the target already in the output: one invocation
// per lane (an O, Q position) walks the update rows in order, so duplicates resolve as
// Nx.BinaryBackend resolves them - put: the last row wins; add: each position gets
// target + (0 + u1 + u2 + ...), its updates summed in row order in ACC - the same bits every
// run, without atomics. Rows whose index is out of range are dropped (as XLA drops them).
// ADD keeps the running sums in SUMS (ACC per target element) and a first-touch flag per
// element in SEEN (uint, zeroed by the caller).
// Defines: ADD; OUT_STORE/OUT_ALIGN, UPD_STORE/UPD_ALIGN, LOAD_UPD(x) (to ACC), LOAD_OUT(x)
// (to ACC), STORE_OUT(v) (from ACC), ACC; IDX_* as in gather.comp.
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
#if NXV_FLOAT64
#extension GL_EXT_shader_explicit_arithmetic_types_float64 : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "index_push.h"
#include "index_clamp.glsl"
#include "scatter_push.h"
layout(push_constant, std430) uniform Push { ScatterPush pc; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) buffer OutBuf { OUT_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = UPD_ALIGN) readonly buffer UpdBuf { UPD_STORE v[]; };
#if ADD
layout(buffer_reference, std430, buffer_reference_align = 8) buffer SumBuf { ACC v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer SeenBuf { uint v[]; };
#endif

void main() {
  OutBuf o = OutBuf(pc.base.out_addr);
  UpdBuf u = UpdBuf(pc.base.in_addr);
#if ADD
  SumBuf sums = SumBuf(pc.sums_addr);
  SeenBuf seen = SeenBuf(pc.seen_addr);
#endif
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint lane = gl_GlobalInvocationID.x; lane < pc.base.n; lane += threads) {
    uint outer = lane / pc.base.q, q = lane - outer * pc.base.q;
    for (uint row = 0u; row < pc.base.rows; ++row) {
      uint at = 0u;
      bool inside = true;
      for (uint k = 0u; k < pc.base.depth; ++k) {
        uint index;
        inside = index_inside(pc.base.idx_addr, row * pc.base.depth + k, pc.base.dims[k], index) && inside;
        at += index * pc.base.pitch[k];
      }
      if (!inside) continue;
      uint target = (outer * pc.base.a_total + at) * pc.base.q + q;
      uint source = (outer * pc.base.rows + row) * pc.base.q + q;
#if ADD
      ACC value = LOAD_UPD(u.v[source]);
      if (seen.v[target] == 0u) {
        seen.v[target] = 1u;
        sums.v[target] = ACC(0) + value;
      } else {
        sums.v[target] += value;
      }
#else
      o.v[target] = u.v[source];
#endif
    }
#if ADD
    for (uint row = 0u; row < pc.base.rows; ++row) {
      uint at = 0u;
      bool inside = true;
      for (uint k = 0u; k < pc.base.depth; ++k) {
        uint index;
        inside = index_inside(pc.base.idx_addr, row * pc.base.depth + k, pc.base.dims[k], index) && inside;
        at += index * pc.base.pitch[k];
      }
      uint target = (outer * pc.base.a_total + at) * pc.base.q + q;
      if (!inside || seen.v[target] != 1u) continue;
      seen.v[target] = 2u;
      o.v[target] = STORE_OUT(LOAD_OUT(o.v[target]) + sums.v[target]);
    }
#endif
  }
}
