// Reduce kernel: one pass of a reduction (ops/reduce/reduce.cpp plans the passes). Groups of
// TPR invocations each reduce one row chunk: every invocation folds a strided share of it
// (four loads in flight), then the group combines its values
// in a fixed tree in shared memory, so the same input gives the same bits on every run.
// Defines: WG (workgroup size), TPR (invocations per row chunk, a power of two <= WG),
// IN_STORE/OUT_STORE (+ _ALIGN), ACC (accumulator type), IDENT, LOAD(x) (stored input -> ACC),
// COMBINE(a, b), STORE_OUT(v); ARG (argmax/argmin: ACC is the value type, indices are uint;
// ARG_BETTER(b, a), ARG_NAN(v), TIE_HIGH, FROM_PARTIALS with AUX_STORE/AUX_ALIGN/LOAD_AUX).
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

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "reduce_push.h"

layout(push_constant, std430) uniform Params { ReducePush pc; };

layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
#if ARG && FROM_PARTIALS
layout(buffer_reference, std430, buffer_reference_align = AUX_ALIGN) readonly buffer AuxBuf { AUX_STORE v[]; };
#endif

const uint GROUPS = WG / TPR;
const uint NONE = 0xFFFFFFFFu;

#if TPR > 1
shared ACC s_acc[WG];
#if ARG
shared uint s_idx[WG];
#endif
#endif

#if ARG
// Nx's order: the last NaN wins over everything; else the better value; a tie goes to the
// lower index (or the higher with TIE_HIGH). Indices decide, so any grouping gives Nx's answer.
void arg_combine(inout ACC av, inout uint ai, ACC bv, uint bi) {
  if (bi == NONE) return;
  bool take;
  if (ai == NONE) {
    take = true;
  } else {
    bool an = ARG_NAN(av), bn = ARG_NAN(bv);
    if (an || bn) {
      take = bn && (!an || bi > ai);
    } else if (ARG_BETTER(bv, av)) {
      take = true;
    } else if (ARG_BETTER(av, bv)) {
      take = false;
    } else {
      take = TIE_HIGH ? bi > ai : bi < ai;
    }
  }
  if (take) {
    av = bv;
    ai = bi;
  }
}
#endif

void main() {
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
#if ARG && FROM_PARTIALS
  AuxBuf aux = AuxBuf(pc.aux_addr);
#endif
  uint id = gl_LocalInvocationID.x;
  uint lane = id % TPR;
  uint slot = id / TPR;
  uint per_trip = GROUPS * gl_NumWorkGroups.x;
  uint trips = (pc.rows + per_trip - 1u) / per_trip;  // the same for the whole workgroup
  for (uint t = 0u; t < trips; ++t) {
    uint q = (t * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GROUPS + slot;
    ACC acc = IDENT;
#if ARG
    uint idx = NONE;
#endif
    if (q < pc.rows) {
      uint i = q % pc.inner;
      uint og = q / pc.inner;
      uint g = og % pc.chunks;
      uint o = og / pc.chunks;
      uint base = o * pc.outer_stride + i * pc.inner_stride;
      uint r0 = g * pc.chunk_len;
      uint r1 = min(pc.reduced, r0 + pc.chunk_len);
      uint sr = pc.reduced_stride;
#if ARG
#if FROM_PARTIALS
      uint abase = o * pc.aux_outer_stride + i * pc.aux_inner_stride;
#define ARG_STEP(r)                                                  \
  {                                                                  \
    uint k = src.v[base + (r) * sr];                                 \
    arg_combine(acc, idx, LOAD_AUX(aux.v[abase + k * pc.aux_reduced_stride]), k); \
  }
#else
#define ARG_STEP(r) arg_combine(acc, idx, LOAD(src.v[base + (r) * sr]), (r));
#endif
      for (uint r = r0 + lane; r < r1; r += TPR) ARG_STEP(r)
#else
      // Four loads in flight, folded in order: a short row sums as Nx sums it (one by one).
      uint r = r0 + lane;
      for (; r + 3u * TPR < r1; r += 4u * TPR) {
        ACC v0 = LOAD(src.v[base + r * sr]);
        ACC v1 = LOAD(src.v[base + (r + TPR) * sr]);
        ACC v2 = LOAD(src.v[base + (r + 2u * TPR) * sr]);
        ACC v3 = LOAD(src.v[base + (r + 3u * TPR) * sr]);
        acc = COMBINE(COMBINE(COMBINE(COMBINE(acc, v0), v1), v2), v3);
      }
      for (; r < r1; r += TPR) acc = COMBINE(acc, LOAD(src.v[base + r * sr]));
#endif
    }
#if TPR > 1
    s_acc[id] = acc;
#if ARG
    s_idx[id] = idx;
#endif
    barrier();
    for (uint s = TPR / 2u; s > 0u; s >>= 1u) {
      if (lane < s) {
#if ARG
        ACC v = s_acc[id];
        uint k = s_idx[id];
        arg_combine(v, k, s_acc[id + s], s_idx[id + s]);
        s_acc[id] = v;
        s_idx[id] = k;
#else
        s_acc[id] = COMBINE(s_acc[id], s_acc[id + s]);
#endif
      }
      barrier();
    }
    acc = s_acc[id];
#if ARG
    idx = s_idx[id];
#endif
#endif
    if (lane == 0u && q < pc.rows) {
#if ARG
#if FINAL
      dst.v[q] = STORE_OUT(idx == NONE ? 0u : idx);
#else
      dst.v[q] = idx;
#endif
#else
      dst.v[q] = STORE_OUT(acc);
#endif
    }
  }
}
