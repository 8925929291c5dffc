// Elementwise kernel of a generated chain (ops/elementwise/fusion.hpp) over four to eight
// operands, each dense like the output or a single element: out[i] = OP over the operands'
// element i (element 0 of a single-element one). One element per trip: the chains that read
// this many tensors are a gradient's or a sampler's small ones.
// Push constants: ElementwiseWidePush (elementwise_push.h). Defines (elementwise.cpp,
// wide_kernel_key): NIN, C (compute type), OUT_STORE/OUT_ALIGN/STORE_OUT(v), OP (the chain's
// call over a, b, c, in3...), NXV_WIDE_LOADS(i) (each operand loaded into its register),
// and NXV_* feature switches; the operands' buffer types come with the generated code.
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
#include "elementwise_push.h"
layout(push_constant, std430) uniform Params { ElementwiseWidePush pc; };
#include "nxv_generated.glsl"  // the chain's functions and the operands' buffer types

layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

// Results are precise, as in elementwise.comp: a fused chain rounds where its steps' own
// kernels do.
void main() {
#ifdef NXV_KERNEL_INIT
  NXV_KERNEL_INIT();
#endif
  OutBuf o = OutBuf(pc.out_addr);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += threads) {
    NXV_WIDE_LOADS(i)
    precise C r = OP;
    o.v[i] = STORE_OUT(r);
  }
}
