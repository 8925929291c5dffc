// The second pass of a split-K product: out[i] = sum over s of part[s * n + i] (the
// accumulator type), added in order of s, rounded once to the output type.
// Defines: ACC, ZERO, OUT_STORE, OUT_ALIGN, STORE_OUT(v), EPILOGUE (dot_epilogue.glsl, or with
// CONV_EPILOGUE a conv's: offset_epilogue.glsl; i is then the offset in the conv's output).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
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
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { SplitSumPush pc; };

layout(buffer_reference, std430) readonly buffer PartBuf { ACC v[]; };
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer OutBuf { OUT_STORE v[]; };

#ifdef CONV_EPILOGUE
#include "offset_epilogue.glsl"
#else
#include "dot_epilogue.glsl"
#endif

void main() {
  PartBuf part = PartBuf(pc.part_addr);
  OutBuf dst = OutBuf(pc.out_addr);
  for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    ACC acc = ZERO;
    for (uint s = 0u; s < pc.splits; ++s) acc += part.v[s * pc.n + i];
    dst.v[i] = STORE_RESULT(i, acc);
  }
}
