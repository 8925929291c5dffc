// Cumulative ops (cumulative_sum/product/max/min) along one axis of [outer, n, inner]. COLUMNS
// (inner > 1): an invocation per (outer, inner) column walks it in order, neighbouring
// invocations reading neighbouring columns. Otherwise a workgroup per row scans tiles of
// WG * 4 elements: each invocation folds its four, the workgroup scans their totals in shared
// memory (Hillis-Steele, a fixed order), and a carry runs from tile to tile. No workgroup ever
// waits on another. SG_ROWS (many rows or short ones, where the device has subgroup shuffles):
// a subgroup per row, no barriers: it takes SG * 16 elements a trip as four pieces of four per
// invocation, each piece scanned across the subgroup by shuffles (Hillis-Steele, a fixed order)
// after its invocations fold their four, the carry passed from piece to piece; VEC4 (dense
// rows of 4- and 8-byte types, n a multiple of 4, forward) loads and stores the four as one
// vector. Defines: WG, COLUMNS, SG_ROWS, VEC4 (IN_VEC, IN_VREG, OUT_VEC), SHUFFLE(v, id),
// IN_STORE/OUT_STORE (+ _ALIGN), ACC, IDENT, LOAD(x), COMBINE(a, b), STORE_OUT(v).
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
#if SG_ROWS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "scan_push.h"

layout(push_constant, std430) uniform Params { ScanPush pc; };
layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
#if VEC4
layout(buffer_reference, std430, buffer_reference_align = IN_VALIGN) readonly buffer InBuf4 { IN_VEC v[]; };
layout(buffer_reference, std430, buffer_reference_align = IN_VALIGN) writeonly buffer OutBuf4 { OUT_VEC v[]; };
#endif

#if !COLUMNS && !SG_ROWS
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
#elif SG_ROWS
  uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupSize;
  uint piece = sg * 4u;  // elements of one piece: four per invocation
  uint subgroups = gl_NumWorkGroups.x * gl_NumSubgroups;
#if VEC4
  InBuf4 src4 = InBuf4(pc.in_addr);
  OutBuf4 dst4 = OutBuf4(pc.out_addr);
#endif
  for (uint row = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; row < pc.outer; row += subgroups) {
    uint base = row * pc.outer_stride;
    uint obase = row * pc.n;
    ACC carry = IDENT;
    for (uint t0 = 0u; t0 < pc.n; t0 += 4u * piece) {
      // Every load of the trip first, then the pieces in order.
      ACC v[4][4];
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        uint k0 = t0 + j * piece + lane * 4u;
#if VEC4
        [[unroll]] for (uint e = 0u; e < 4u; ++e) v[j][e] = IDENT;
        if (k0 < pc.n) {  // n is a multiple of 4: all four or none
          IN_VREG w = IN_VREG(src4.v[(base + k0) / 4u]);
          v[j][0] = LOAD(w.x);
          v[j][1] = LOAD(w.y);
          v[j][2] = LOAD(w.z);
          v[j][3] = LOAD(w.w);
        }
#else
        [[unroll]] for (uint e = 0u; e < 4u; ++e) {
          uint k = k0 + e;
          uint r = pc.reverse != 0u ? pc.n - 1u - k : k;
          v[j][e] = IDENT;
          if (k < pc.n) v[j][e] = LOAD(src.v[base + r * pc.n_stride]);
        }
#endif
      }
      [[unroll]] for (uint j = 0u; j < 4u; ++j) {
        if (t0 + j * piece >= pc.n) break;  // the same for the whole subgroup
        ACC run[4];
        run[0] = v[j][0];
        [[unroll]] for (uint e = 1u; e < 4u; ++e) run[e] = COMBINE(run[e - 1u], v[j][e]);
        ACC incl = run[3];
        for (uint off = 1u; off < sg; off <<= 1u) {
          ACC up = SHUFFLE(incl, lane >= off ? lane - off : lane);
          if (lane >= off) incl = COMBINE(up, incl);
        }
        ACC before = SHUFFLE(incl, lane > 0u ? lane - 1u : 0u);
        ACC last = SHUFFLE(incl, sg - 1u);
        ACC prefix = carry;
        if (lane > 0u) prefix = COMBINE(carry, before);
        ACC o[4];
        [[unroll]] for (uint e = 0u; e < 4u; ++e) o[e] = COMBINE(prefix, run[e]);
        uint k0 = t0 + j * piece + lane * 4u;
#if VEC4
        if (k0 < pc.n) dst4.v[(obase + k0) / 4u] = OUT_VEC(STORE_OUT(o[0]), STORE_OUT(o[1]), STORE_OUT(o[2]), STORE_OUT(o[3]));
#else
        [[unroll]] for (uint e = 0u; e < 4u; ++e) {
          uint k = k0 + e;
          uint r = pc.reverse != 0u ? pc.n - 1u - k : k;
          if (k < pc.n) dst.v[obase + r] = STORE_OUT(o[e]);
        }
#endif
        carry = COMBINE(carry, last);
      }
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
