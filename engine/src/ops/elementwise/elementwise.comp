// Elementwise kernel: out[i] = OP(LOAD_A(a[...]), LOAD_B(b[...]), LOAD_CC(c[...])).
// Buffers are reached by device address (push constants), so one pipeline layout serves all.
// Defines (from ops/elementwise/elementwise.cpp): NIN (1|2|3), LINEAR (1: operands are dense or scalar;
// 0: strided with up to 6 collapsed axes, 4 with three inputs; push constants in elementwise_push.h),
// ONE_WIDE (defined on CPU drivers: dense operands one element per trip), RUN (defined on CPU
// drivers: strided operands in runs of RUN elements), A_STORE/B_STORE/OUT_STORE (storage types), C
// (compute type), LOAD_A(x)/LOAD_B(x)/STORE_OUT(v), OP(a[,b]), and NXV_* feature switches.
// An op's include may define NXV_KERNEL_INIT, run by every invocation before any element
// (nxv_pow_f32.glsl fills its shared-memory tables there).
// An op with a rare long path (sin, cos, tan: the exact reduction of huge arguments) also has
// OP_FAST(a[,b],exact): OP without that path, setting `exact` where an element needs OP itself.
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
#ifdef NXV_GENERATED
#include "nxv_generated.glsl"  // generated functions: fused chains (ops/elementwise/fusion.cpp)
#endif

layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };
layout(buffer_reference, std430, buffer_reference_align = A_ALIGN) readonly buffer ABuf { A_STORE v[]; };
#if NIN >= 2
layout(buffer_reference, std430, buffer_reference_align = B_ALIGN) readonly buffer BBuf { B_STORE v[]; };
#endif
#if NIN >= 3
layout(buffer_reference, std430, buffer_reference_align = CC_ALIGN) readonly buffer CBuf { CC_STORE v[]; };
#endif

#if LINEAR && VEC4
// Four-wide views of the same memory (the host checks 4-element alignment). Loads convert to
// A_VREG/B_VREG, the register form (f16 widens to vec4); OUT_VEC_OF, where defined, builds the
// stored vector from four results in one conversion.
layout(buffer_reference, std430, buffer_reference_align = OUT_VALIGN) writeonly buffer OutBuf4 { OUT_VEC v[]; };
layout(buffer_reference, std430, buffer_reference_align = A_VALIGN) readonly buffer ABuf4 { A_VEC v[]; };
#if NIN >= 2
layout(buffer_reference, std430, buffer_reference_align = B_VALIGN) readonly buffer BBuf4 { B_VEC v[]; };
#endif
#ifndef OUT_VEC_OF
#define OUT_VEC_OF(r0, r1, r2, r3) OUT_VEC(STORE_OUT(r0), STORE_OUT(r1), STORE_OUT(r2), STORE_OUT(r3))
#endif
#endif

#include "elementwise_push.h"
#if NIN >= 3
layout(push_constant, std430) uniform Params { Elementwise3Push pc; };
#else
layout(push_constant, std430) uniform Params { ElementwisePush pc; };
#endif

// Results are precise: an op's own arithmetic (a multiply, say) is never contracted with the
// arithmetic of whatever consumes it, so a fused chain (fusion.cpp), whose steps are precise
// the same way, rounds where these kernels do.
void main() {
#ifdef NXV_KERNEL_INIT
  NXV_KERNEL_INIT();  // per-workgroup tables of an op (nxv_pow_f32.glsl), before any element
#endif
  OutBuf o = OutBuf(pc.out_addr);
  ABuf a = ABuf(pc.a_addr);
#if NIN >= 2
  BBuf b = BBuf(pc.b_addr);
#endif
#if NIN >= 3
  CBuf cb = CBuf(pc.c_addr);
#endif
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
#if LINEAR && defined(ONE_WIDE)
  // CPU drivers vectorize across invocations themselves: one element per trip, OP inlined once
  // (the loops below inline it four times and more, which only lengthens their compile).
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
#if NIN >= 3
    precise C r = OP(LOAD_A(a.v[i * pc.a_stride[0]]), LOAD_B(b.v[i * pc.b_stride[0]]), LOAD_CC(cb.v[i * pc.c_stride[0]]));
#elif NIN >= 2
    precise C r = OP(LOAD_A(a.v[i * pc.a_stride[0]]), LOAD_B(b.v[i * pc.b_stride[0]]));
#else
    precise C r = OP(LOAD_A(a.v[i * pc.a_stride[0]]));
#endif
    o.v[i] = STORE_OUT(r);
  }
#elif LINEAR
#if NIN >= 3
#define ELEM_OF(F, j) F(LOAD_A(a.v[(j) * pc.a_stride[0]]), LOAD_B(b.v[(j) * pc.b_stride[0]]), LOAD_CC(cb.v[(j) * pc.c_stride[0]]))
#elif NIN >= 2
#define ELEM_OF(F, j) F(LOAD_A(a.v[(j) * pc.a_stride[0]]), LOAD_B(b.v[(j) * pc.b_stride[0]]))
#else
#define ELEM_OF(F, j) F(LOAD_A(a.v[(j) * pc.a_stride[0]]))
#endif
#ifdef OP_FAST
  // The loops run OP_FAST; an invocation that met an element needing OP computes its elements
  // again after them, through OP at one call site that also takes the tail: inlined into each
  // of the loops' elements, OP's rare path made the kernel several times longer to compile.
  bool exact_seen = false;
#if NIN >= 3
#define OP_LOOP(a, b, c) OP_FAST(a, b, c, exact_seen)
#elif NIN >= 2
#define OP_LOOP(a, b) OP_FAST(a, b, exact_seen)
#else
#define OP_LOOP(a) OP_FAST(a, exact_seen)
#endif
#else
#define OP_LOOP OP
#endif
#define ELEM(j) ELEM_OF(OP_LOOP, j)
  uint i = gl_GlobalInvocationID.x;
#if VEC4
  {
    // 4 elements per load; scalar operands (stride 0) are read once and splatted.
    OutBuf4 o4 = OutBuf4(pc.out_addr);
    ABuf4 a4 = ABuf4(pc.a_addr);
    bool a_one = pc.a_stride[0] == 0u;
    A_VREG a_splat = A_VREG(A_SREG(a.v[0]));
#if NIN >= 2
    BBuf4 b4 = BBuf4(pc.b_addr);
    bool b_one = pc.b_stride[0] == 0u;
    B_VREG b_splat = B_VREG(B_SREG(b.v[0]));
#endif
    uint n4 = pc.n / 4u;
    uint j = gl_GlobalInvocationID.x;
    // The next trip's operands are loaded before this trip's arithmetic, so that loads stay in
    // flight while long ops compute (sin f32 on an H200: 0.87 -> 0.92 of copy bandwidth). A
    // branch, not a select: a scalar operand's buffer has no element j to read.
    A_VREG an = a_splat;
    if (!a_one && j < n4) an = A_VREG(a4.v[j]);
#if NIN >= 2
    B_VREG bn = b_splat;
    if (!b_one && j < n4) bn = B_VREG(b4.v[j]);
#endif
    for (; j < n4; j += threads) {
      uint jn = j + threads;
      A_VREG av = an;
      if (!a_one && jn < n4) an = A_VREG(a4.v[jn]);
#if NIN >= 2
      B_VREG bv = bn;
      if (!b_one && jn < n4) bn = B_VREG(b4.v[jn]);
      precise C r0 = OP_LOOP(LOAD_A(av.x), LOAD_B(bv.x));
      precise C r1 = OP_LOOP(LOAD_A(av.y), LOAD_B(bv.y));
      precise C r2 = OP_LOOP(LOAD_A(av.z), LOAD_B(bv.z));
      precise C r3 = OP_LOOP(LOAD_A(av.w), LOAD_B(bv.w));
#else
      precise C r0 = OP_LOOP(LOAD_A(av.x));
      precise C r1 = OP_LOOP(LOAD_A(av.y));
      precise C r2 = OP_LOOP(LOAD_A(av.z));
      precise C r3 = OP_LOOP(LOAD_A(av.w));
#endif
      o4.v[j] = OUT_VEC_OF(r0, r1, r2, r3);
    }
    i = n4 * 4u + gl_GlobalInvocationID.x;  // the tail, below, element by element
  }
#endif
#if !VEC4  // after the four-wide loop fewer than four elements are left
  // Four independent elements per trip keep more loads in flight: these kernels are bound by
  // memory bandwidth. (n <= 2^30 per dispatch, so i + 3 * threads cannot wrap.)
  for (; i + 3u * threads < pc.n; i += 4u * threads) {
    precise C r0 = ELEM(i);
    precise C r1 = ELEM(i + threads);
    precise C r2 = ELEM(i + 2u * threads);
    precise C r3 = ELEM(i + 3u * threads);
    o.v[i] = STORE_OUT(r0);
    o.v[i + threads] = STORE_OUT(r1);
    o.v[i + 2u * threads] = STORE_OUT(r2);
    o.v[i + 3u * threads] = STORE_OUT(r3);
  }
#endif
#ifndef OP_FAST
  for (; i < pc.n; i += threads) {
    precise C r = ELEM(i);
    o.v[i] = STORE_OUT(r);
  }
#else
  {
    // OP's one call site: the tail, and where an element of this invocation needed OP, its
    // elements of the loops above again (4 j .. 4 j + 3 for its four-wide trips j).
#if VEC4
    uint n4 = pc.n / 4u;
#else
    uint n4 = 0u;
    if (exact_seen) i = gl_GlobalInvocationID.x;
#endif
    uint j = exact_seen ? gl_GlobalInvocationID.x : n4, k = 0u;
    for (;;) {
      uint e;
      if (j < n4) {
        e = 4u * j + k;
        if (++k == 4u) {
          k = 0u;
          j += threads;
        }
      } else if (i < pc.n) {
        e = i;
        i += threads;
      } else {
        break;
      }
      precise C r = ELEM_OF(OP, e);
      o.v[e] = STORE_OUT(r);
    }
  }
#endif
#elif defined(RUN)
  // CPU drivers: each invocation takes runs of RUN consecutive elements, whose coordinates are
  // divided out once per run (and where a run crosses a row of the last axis, per row) and then
  // stepped along that axis: a division costs a CPU driver tens of cycles per lane.
  uint runs = pc.n / RUN + (pc.n % RUN != 0u ? 1u : 0u);
  for (uint run = gl_GlobalInvocationID.x; run < runs; run += threads) {
    uint i = run * RUN, end = min(pc.n, i + RUN);
    while (i < end) {
      uint rest = pc.start + i, left = end - i;
      uint ia = 0u, ib = 0u, ic = 0u;
      for (int d = int(pc.rank) - 1; d >= 0; --d) {
        uint c = rest % pc.shape[d];
        rest /= pc.shape[d];
        if (d == int(pc.rank) - 1) left = min(left, pc.shape[d] - c);
        ia += c * pc.a_stride[d];
        ib += c * pc.b_stride[d];
#if NIN >= 3
        ic += c * pc.c_stride[d];
#endif
      }
      uint last = max(pc.rank, 1u) - 1u;
      uint sa = pc.a_stride[last], sb = pc.b_stride[last];
#if NIN >= 3
      uint sc = pc.c_stride[last];
#else
      uint sc = 0u;
#endif
      if ((pc.dense & 1u) != 0u) ia = i, sa = 1u;
      if ((pc.dense & 2u) != 0u) ib = i, sb = 1u;
      if ((pc.dense & 4u) != 0u) ic = i, sc = 1u;
      for (uint stop = i + left; i < stop; ++i, ia += sa, ib += sb, ic += sc) {
#if NIN >= 3
        precise C r = OP(LOAD_A(a.v[ia]), LOAD_B(b.v[ib]), LOAD_CC(cb.v[ic]));
#elif NIN >= 2
        precise C r = OP(LOAD_A(a.v[ia]), LOAD_B(b.v[ib]));
#else
        precise C r = OP(LOAD_A(a.v[ia]));
#endif
        o.v[i] = STORE_OUT(r);
      }
    }
  }
#else
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    uint rest = pc.start + i;
    uint ia = 0u, ib = 0u, ic = 0u;
    for (int d = int(pc.rank) - 1; d >= 0; --d) {
      uint c = rest % pc.shape[d];
      rest /= pc.shape[d];
      ia += c * pc.a_stride[d];
      ib += c * pc.b_stride[d];
#if NIN >= 3
      ic += c * pc.c_stride[d];
#endif
    }
    if ((pc.dense & 1u) != 0u) ia = i;
    if ((pc.dense & 2u) != 0u) ib = i;
    if ((pc.dense & 4u) != 0u) ic = i;
#if NIN >= 3
    precise C r = OP(LOAD_A(a.v[ia]), LOAD_B(b.v[ib]), LOAD_CC(cb.v[ic]));
#elif NIN >= 2
    precise C r = OP(LOAD_A(a.v[ia]), LOAD_B(b.v[ib]));
#else
    precise C r = OP(LOAD_A(a.v[ia]));
#endif
    o.v[i] = STORE_OUT(r);
  }
#endif
}
