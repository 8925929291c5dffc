// Loop kernel (ops/loop/loop_kernel.cpp): every trip of a counted loop in one workgroup. The
// generated code holds the body's elementwise chains (ops/elementwise/fusion.cpp), its
// matrix-vector products in their eager kernels' order (ops/dot/dot_in_workgroup.hpp), the
// values and the loop state in shared memory, and nxv_loop_main, which runs the trips.
// Push constants: LoopPush (loop_push.h), the buffers' addresses in a parameter block.
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
#if NXV_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout(local_size_x_id = 0) in;

#include "nxv_float_controls.glsl"
#include "nxv_math.glsl"
#include "loop_push.h"
layout(push_constant, std430) uniform Params { LoopPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer LoopParamsBuf { LoopParams p; };
#include "nxv_generated.glsl"

void main() {
#ifdef NXV_KERNEL_INIT
  NXV_KERNEL_INIT();
#endif
  nxv_loop_main();
}
