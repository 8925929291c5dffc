// Cumulative ops (cumulative_sum/product/max/min) along one axis of [outer, n, inner]. COLUMNS
// (inner > 1): an invocation per (outer, inner) column walks it in order, neighbouring
// invocations reading neighbouring columns. Otherwise a workgroup per row scans tiles of
// WG * 4 elements: each invocation folds its four, the workgroup scans their totals in shared
// memory (Hillis-Steele, a fixed order), and a carry runs from tile to tile. No workgroup ever
// waits on another. Defines: WG, COLUMNS, IN_STORE/OUT_STORE (+ _ALIGN), ACC, IDENT, LOAD(x),
// COMBINE(a, b), STORE_OUT(v).
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

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "scan_push.h"

layout(push_constant, std430) uniform Params { ScanPush pc; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

#if !COLUMNS
shared ACC s_tot[WG];
#endif

void main() {
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
#if COLUMNS
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint columns = pc.outer * pc.inner;
  for (uint q = gl_GlobalInvocationID.x; q < columns; q += threads) {
    uint o = q / pc.inner, i = q - o * pc.inner;
    uint base = o * pc.outer_stride + i * pc.inner_stride;
    uint obase = o * pc.n * pc.inner + i;
    ACC acc = IDENT;
    for (uint k = 0u; k < pc.n; ++k) {
      uint r = pc.reverse != 0u ? pc.n - 1u - k : k;
      ACC v = LOAD(src.v[base + r * pc.n_stride]);
      acc = COMBINE(acc, v);
      dst.v[obase + r * pc.inner] = STORE_OUT(acc);
    }
  }
#else
  uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < pc.outer; row += gl_NumWorkGroups.x) {
    uint base = row * pc.outer_stride;
    uint obase = row * pc.n;
    ACC carry = IDENT;
    for (uint t0 = 0u; t0 < pc.n; t0 += WG * 4u) {
      ACC a[4];
      ACC run = IDENT;
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k = t0 + tid * 4u + j;
        uint r = pc.reverse != 0u ? pc.n - 1u - k : k;
        ACC v = IDENT;
        if (k < pc.n) v = LOAD(src.v[base + r * pc.n_stride]);
        run = COMBINE(run, v);
        a[j] = run;
      }
      s_tot[tid] = run;
      barrier();
      for (uint off = 1u; off < WG; off <<= 1u) {
        ACC left = IDENT;
        if (tid >= off) left = s_tot[tid - off];
        barrier();
        ACC mine = s_tot[tid];
        s_tot[tid] = COMBINE(left, mine);
        barrier();
      }
      ACC before = IDENT;
      if (tid > 0u) before = s_tot[tid - 1u];
      ACC prefix = COMBINE(carry, before);
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k = t0 + tid * 4u + j;
        uint r = pc.reverse != 0u ? pc.n - 1u - k : k;
        ACC out_v = COMBINE(prefix, a[j]);
        if (k < pc.n) dst.v[obase + r] = STORE_OUT(out_v);
      }
      ACC tile = s_tot[WG - 1u];
      carry = COMBINE(carry, tile);
      barrier();  // s_tot is rewritten by the next tile
    }
  }
#endif
}
