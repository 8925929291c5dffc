// Arithmetic probe for benchmarks: the device's fused multiply-add rate in T (float or
// double), that dot kernels are measured against. Each invocation runs 16 independent fma
// chains (enough independent work to hide the latency) for pc.iterations steps and writes
// their sum, so that nothing is optimised away. 32 flop per step.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;

layout(buffer_reference, std430) writeonly buffer Dst { T v[]; };

layout(push_constant, std430) uniform Params {
  uvec2 dst;
  uint iterations;
  float scale;  // below 1: the chains stay finite
} pc;

void main() {
  T x = T(gl_GlobalInvocationID.x) * T(1e-7), y = T(pc.scale);
  T a[16];
  [[unroll]] for (uint c = 0u; c < 16u; ++c) a[c] = x + T(c);
  for (uint i = 0u; i < pc.iterations; ++i) {
    [[unroll]] for (uint c = 0u; c < 16u; ++c) a[c] = fma(a[c], y, x);
  }
  T sum = T(0);
  [[unroll]] for (uint c = 0u; c < 16u; ++c) sum += a[c];
  Dst(pc.dst).v[gl_GlobalInvocationID.x] = sum;
}
