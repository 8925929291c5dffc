// Bandwidth probe for benchmarks: a plain 16-byte-per-load copy, the device's practical
// copy bandwidth that memory-bound kernels are measured against.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x_id = 0) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Src { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Dst { uvec4 v[]; };

layout(push_constant, std430) uniform Params {
  uvec2 src;
  uvec2 dst;
  uint n;  // uvec4 elements
} pc;

void main() {
  Src s = Src(pc.src);
  Dst d = Dst(pc.dst);
  uint threads = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint i = gl_GlobalInvocationID.x;
  for (; i + threads < pc.n; i += 2u * threads) {
    uvec4 a = s.v[i];
    uvec4 b = s.v[i + threads];
    d.v[i] = a;
    d.v[i + threads] = b;
  }
  for (; i < pc.n; i += threads) d.v[i] = s.v[i];
}
