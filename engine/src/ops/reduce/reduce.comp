// Reduce kernel: one pass of a reduction (ops/reduce/reduce.cpp plans the passes). Groups of
// TPR invocations each reduce one row chunk: every invocation folds a strided share of it in
// order, several loads in flight; then the group combines its values in a fixed order
// (subgroup shuffles, then a shared-memory tree), so the same input gives the same bits on
// every run.
// Defines: WG (workgroup size), TPR (invocations per row chunk, a power of two <= WG; side by
// side, or WG / TPR apart with LANES_APART, where neighbouring invocations take neighbouring rows),
// IN_STORE/OUT_STORE (+ _ALIGN), ACC (accumulator type), IDENT, LOAD(x) (stored input -> ACC),
// COMBINE(a, b), STORE_OUT(v), FINAL (this pass writes the result), FROM_PARTIALS (it reads
// the pass before's); SUBGROUP with SHUFFLE_XOR(v, m); VEC4 (dense rows read four-wide: IN_VEC,
// IN_VREG, IN_VALIGN); ARG (argmax/argmin: ACC is the value type, indices are uint;
// ARG_BETTER(b, a), ARG_NAN(v), TIE_HIGH; from partials AUX_STORE/AUX_ALIGN/LOAD_AUX read
// the values the partial indices point at); COMBINER (reduce/5: COMBINE is the traced function
// nxv_combine(x, acc), which has no identity: each invocation keeps whether it holds a value,
// the first pass's first invocation of a row starts from the accumulator read through
// AUX_STORE/LOAD_AUX at aux_addr, and values combine as fun.(later, earlier)); EPILOGUE (the
// final pass of sum, product, max, min stores through an elementwise chain: offset_epilogue.glsl);
// PROLOGUE (their first pass computes each element by an elementwise chain: nxv_prologue; a
// single pass may have both, their parameters in one block).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : enable
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
#if SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#if defined(NXV_GENERATED) && COMBINER
#include "nxv_generated.glsl"  // the combiner of reduce/5 (ops/reduce/combiner.cpp)
#endif
#include "reduce_push.h"

layout(push_constant, std430) uniform Params { ReducePush pc; };

// The first pass's prologue (PROLOGUE): nxv_prologue(o, i, k), element k of row (o, i) as the
// tensor would hold it, computed from the prologue's tensors (ops/reduce/reduce_prologue.cpp).
#if PROLOGUE
#include "reduce_prologue.h"
#if defined(EPILOGUE)
// A pass with both: one parameter block holds the prologue's, then the epilogue's.
#include "offset_epilogue.h"
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ReduceFusedRef {
  ReducePrologueParams pro;
  OffsetEpilogueParams epi;
};
#define NXV_PROLOGUE_PARAMS (ReduceFusedRef(pc.fused_addr).pro)
#define NXV_EPILOGUE_PARAMS (ReduceFusedRef(pc.fused_addr).epi)
#else
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ReducePrologueRef { ReducePrologueParams p; };
#define NXV_PROLOGUE_PARAMS (ReducePrologueRef(pc.fused_addr).p)
#endif
#define NXV_CHAIN_ZERO (NXV_PROLOGUE_PARAMS.zero)
#include "nxv_generated.glsl"
#undef C
#endif

// STORE_RESULT(q, v): the final pass's store, through its epilogue where it has one (EPILOGUE).
#if FINAL && !ARG && !COMBINER
#ifndef NXV_EPILOGUE_PARAMS
#define NXV_EPILOGUE_ADDR (pc.fused_addr)
#endif
#include "offset_epilogue.glsl"
#else
#define STORE_RESULT(i, v) STORE_OUT(v)
#endif

layout(buffer_reference, std430, buffer_reference_align = IN_ALIGN) readonly buffer InBuf { IN_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
#if VEC4
layout(buffer_reference, std430, buffer_reference_align = IN_VALIGN) readonly buffer InBuf4 { IN_VEC v[]; };
#endif
#if (ARG && FROM_PARTIALS) || (COMBINER && !FROM_PARTIALS)
layout(buffer_reference, std430, buffer_reference_align = AUX_ALIGN) readonly buffer AuxBuf { AUX_STORE v[]; };
#endif

const uint GROUPS = WG / TPR;
const uint NONE = 0xFFFFFFFFu;

#if TPR > 1
shared ACC s_acc[WG];
#if ARG
shared uint s_idx[WG];
#endif
#if COMBINER
shared uint s_has[WG];
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
// The same for a value whose index is above every index folded so far (an invocation's own
// elements, taken in order): selects, no branches.
void arg_fold(inout ACC av, inout uint ai, ACC bv, uint bi) {
  bool bn = ARG_NAN(bv);
  bool better = TIE_HIGH ? !ARG_BETTER(av, bv) : ARG_BETTER(bv, av);
  bool take = ai == NONE || bn || (!ARG_NAN(av) && better);
  av = take ? bv : av;
  ai = take ? bi : ai;
}
#define FOLD(v, k) arg_fold(acc, idx, v, k)
#elif COMBINER
// fun.(element, acc) in element order; an invocation's first element is its value.
#define FOLD(v, k)                             \
  {                                            \
    ACC fv = v;                                \
    acc = has ? COMBINE(fv, acc) : fv;         \
    has = true;                                \
  }
#else
// Operands in variables: COMBINE may name them more than once (NXV_FMAX's selects).
#define FOLD(v, k)    \
  {                   \
    ACC fv = v;       \
    acc = COMBINE(acc, fv); \
  }
#endif

void main() {
#ifdef NXV_KERNEL_INIT
  NXV_KERNEL_INIT();  // tables of a combiner's step (nxv_pow_f32.glsl), before any element
#endif
  InBuf src = InBuf(pc.in_addr);
  OutBuf dst = OutBuf(pc.out_addr);
#if VEC4
  InBuf4 src4 = InBuf4(pc.in_addr);
#endif
#if ARG && FROM_PARTIALS
  AuxBuf aux = AuxBuf(pc.aux_addr);
#endif
  uint id = gl_LocalInvocationID.x;
#if LANES_APART
  // Neighbouring invocations take neighbouring rows (columns of the tensor: reads coalesce).
  uint lane = id / GROUPS;
  uint slot = id % GROUPS;
#define PEER(s) (id + (s) * GROUPS)
#else
  uint lane = id % TPR;
  uint slot = id / TPR;
#define PEER(s) (id + (s))
#endif
  uint per_trip = GROUPS * gl_NumWorkGroups.x;
  uint trips = (pc.rows + per_trip - 1u) / per_trip;  // the same for the whole workgroup
  for (uint t = 0u; t < trips; ++t) {
    uint q = (t * gl_NumWorkGroups.x + gl_WorkGroupID.x) * GROUPS + slot;
    ACC acc = IDENT;
#if ARG
    uint idx = NONE;
#endif
#if COMBINER
    bool has = false;
#endif
    if (q < pc.rows) {
      uint i = q % pc.inner;
      uint og = q / pc.inner;
      uint g = og % pc.chunks;
      uint o = og / pc.chunks;
#if COMBINER && !FROM_PARTIALS
      if (lane == 0u && g == 0u) {
        acc = LOAD_AUX(AuxBuf(pc.aux_addr).v[0]);
        has = true;
      }
#endif
      uint base = o * pc.outer_stride + i * pc.inner_stride;
      uint r0 = g * pc.chunk_len;
      uint r1 = min(pc.reduced, r0 + pc.chunk_len);
      uint sr = pc.reduced_stride;
#if ARG && FROM_PARTIALS
      uint abase = o * pc.aux_outer_stride + i * pc.aux_inner_stride;
#define INDEX(r) src.v[base + (r) * sr]
#define VALUE(k) LOAD_AUX(aux.v[abase + (k) * pc.aux_reduced_stride])
#elif PROLOGUE
#define INDEX(r) (r)
#define VALUE(k) LOAD(nxv_prologue(o, i, k))
#else
#define INDEX(r) (r)
#define VALUE(k) LOAD(src.v[base + (k) * sr])
#endif
#if VEC4
      // Dense rows, four-wide (the host checks that rows and chunks start 4-aligned): two
      // vectors in flight, each folded in element order; a prologue's elements are shared
      // among the invocations as the vectors would share them.
      uint b4 = base / 4u, j1 = r1 / 4u, j = r0 / 4u + lane;
#define FOLD4(vec, jj)                      \
  {                                         \
    uint k4 = (jj) * 4u;                    \
    FOLD(LOAD(vec.x), k4);                  \
    FOLD(LOAD(vec.y), k4 + 1u);             \
    FOLD(LOAD(vec.z), k4 + 2u);             \
    FOLD(LOAD(vec.w), k4 + 3u);             \
  }
#if PROLOGUE
#define LOAD_VEC4(jj)                                                                                  \
  IN_VREG(nxv_prologue(o, i, (jj) * 4u), nxv_prologue(o, i, (jj) * 4u + 1u), nxv_prologue(o, i, (jj) * 4u + 2u), \
          nxv_prologue(o, i, (jj) * 4u + 3u))
#else
#define LOAD_VEC4(jj) IN_VREG(src4.v[b4 + (jj)])
#endif
      for (; j + TPR < j1; j += 2u * TPR) {
        IN_VREG w0 = LOAD_VEC4(j);
        IN_VREG w1 = LOAD_VEC4(j + TPR);
        FOLD4(w0, j)
        FOLD4(w1, j + TPR)
      }
      for (; j < j1; j += TPR) {
        IN_VREG w0 = LOAD_VEC4(j);
        FOLD4(w0, j)
      }
#else
      // Four loads in flight, folded in order: a short row folds as Nx folds it (one by one).
      uint r = r0 + lane;
      for (; r + 3u * TPR < r1; r += 4u * TPR) {
        uint k0 = INDEX(r), k1 = INDEX(r + TPR), k2 = INDEX(r + 2u * TPR), k3 = INDEX(r + 3u * TPR);
        ACC v0 = VALUE(k0), v1 = VALUE(k1), v2 = VALUE(k2), v3 = VALUE(k3);
        FOLD(v0, k0);
        FOLD(v1, k1);
        FOLD(v2, k2);
        FOLD(v3, k3);
      }
      for (; r < r1; r += TPR) {
        uint k = INDEX(r);
        FOLD(VALUE(k), k);
      }
#endif
    }
#if TPR > 1
    // Combine the group's TPR values: within a subgroup by shuffles, across subgroups (or
    // without subgroup operations) through shared memory. Every invocation takes part.
    uint apart = 1u;  // values are combined up to groups of `apart` lanes
#if SUBGROUP
    for (; apart < TPR && apart < gl_SubgroupSize; apart <<= 1u) {
#if ARG
      ACC ov = SHUFFLE_XOR(acc, apart);
      uint oi = subgroupShuffleXor(idx, apart);
      arg_combine(acc, idx, ov, oi);
#elif COMBINER
      ACC other = SHUFFLE_XOR(acc, apart);
      bool other_has = subgroupShuffleXor(has ? 1u : 0u, apart) != 0u;
      if (other_has) acc = has ? COMBINE(other, acc) : other;
      has = has || other_has;
#else
      // In a variable first: every invocation must shuffle, and COMBINE's selects may only
      // evaluate an operand on some of them.
      ACC other = SHUFFLE_XOR(acc, apart);
      acc = COMBINE(acc, other);
#endif
    }
#endif
    if (apart < TPR) {
      s_acc[id] = acc;
#if ARG
      s_idx[id] = idx;
#endif
#if COMBINER
      s_has[id] = has ? 1u : 0u;
#endif
      barrier();
      for (uint s = TPR / 2u; s >= apart; s >>= 1u) {
        if (lane < s && lane % apart == 0u) {
#if ARG
          ACC v = s_acc[id];
          uint k = s_idx[id];
          arg_combine(v, k, s_acc[PEER(s)], s_idx[PEER(s)]);
          s_acc[id] = v;
          s_idx[id] = k;
#elif COMBINER
          if (s_has[PEER(s)] != 0u) {
            ACC mine = s_acc[id], other = s_acc[PEER(s)];
            s_acc[id] = s_has[id] != 0u ? COMBINE(other, mine) : other;
            s_has[id] = 1u;
          }
#else
          ACC mine = s_acc[id], other = s_acc[PEER(s)];
          s_acc[id] = COMBINE(mine, other);
#endif
        }
        barrier();
      }
      acc = s_acc[id];
#if ARG
      idx = s_idx[id];
#endif
    }
#endif
    if (lane == 0u && q < pc.rows) {
#if ARG
#if FINAL
      dst.v[q] = STORE_OUT(idx == NONE ? 0u : idx);
#else
      dst.v[q] = idx;
#endif
#else
      dst.v[q] = STORE_RESULT(q, acc);
#endif
    }
  }
}
