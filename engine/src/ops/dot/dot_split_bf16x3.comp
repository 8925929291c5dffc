// An f32 operand as bf16 parts for the bf16x3 product (dot_bf16x3.hpp, SplitBf16x3Push in
// gemm_push.h): hi is x rounded to nearest even (cut instead where that would overflow), so
// |x - hi| <= 2^-8 |x| and the dropped lo*lo term stays within 2^-16 |x y|; lo is x - hi (exact
// in f32) rounded to nearest even. Non-finite x: hi keeps it (NaN stays NaN) in the
// hi*hi slot, and its other two slots hold 0 (not hi: hi*lo would be inf*0), so an infinity
// multiplies as one. Defines: AXIS (1: rows tripled, B; 2: columns, A).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;

#include "nxv_fastdiv.glsl"
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { SplitBf16x3Push pc; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Src { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) writeonly buffer Dst { uint16_t v[]; };

void main() {
  Src src = Src(pc.src_addr);
  Dst dst = Dst(pc.dst_addr);
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < pc.total; e += stride) {
    uint rest = nxv_fastdiv(e, pc.cols_magic, pc.cols_shift);
    uint j = e - rest * pc.cols;
    uint b = nxv_fastdiv(rest, pc.rows_magic, pc.rows_shift);
    uint i = rest - b * pc.rows;
    uint bits = floatBitsToUint(src.v[b * pc.s_batch + i * pc.s_row + j * pc.s_col]);
    bool finite = (bits & 0x7f800000u) != 0x7f800000u;
    uint hi = finite ? (bits + 0x7fffu + ((bits >> 16u) & 1u)) >> 16u : bits >> 16u;
    if (finite && (hi & 0x7f80u) == 0x7f80u) hi = bits >> 16u;  // rounding up to infinity
    if (!finite && (bits & 0x007fffffu) != 0u) hi = 0x7fc0u | (bits >> 16u & 0x8000u);  // a NaN stays one
    float lo_f = finite ? uintBitsToFloat(bits) - uintBitsToFloat(hi << 16u) : 0.0;
    uint lo_bits = floatBitsToUint(lo_f);
    uint lo = (lo_bits + 0x7fffu + ((lo_bits >> 16u) & 1u)) >> 16u;
    uint hi_again = finite ? hi : 0u;  // the hi that meets the other operand's lo
#if AXIS == 2
    uint base = (b * pc.rows + i) * (3u * pc.cols) + j;
    dst.v[base] = uint16_t(hi);
    dst.v[base + pc.cols] = uint16_t(hi_again);
    dst.v[base + 2u * pc.cols] = uint16_t(lo);
#else
    uint base = (b * 3u * pc.rows + i) * pc.cols + j;
    dst.v[base] = uint16_t(hi);
    dst.v[base + pc.rows * pc.cols] = uint16_t(lo);
    dst.v[base + 2u * pc.rows * pc.cols] = uint16_t(hi_again);
#endif
  }
}
