// Cooperative-matrix probe: one subgroup computes R = A * B + C for one M x N x K shape that the
// device reports (VK_KHR_cooperative_matrix, subgroup scope), so tests can check that the
// extension is enabled and really runs. Row-major A (M x K), B (K x N), C and R (M x N), each
// at the start of its buffer (coopmat loads want 16-byte-aligned rows and pointers).
// Defines: M, N, K; A_TYPE, B_TYPE, C_TYPE (accumulator and result: float16_t or float);
// NXV_F16 (1 when any of them is float16_t). The workgroup (specialisation constant 0) must be
// exactly one subgroup.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#if NXV_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#endif

layout(local_size_x_id = 0) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer ABuf { A_TYPE v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer BBuf { B_TYPE v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer CBuf { C_TYPE v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer RBuf { C_TYPE v[]; };

layout(push_constant, std430) uniform Params {
  uvec2 a;
  uvec2 b;
  uvec2 c;
  uvec2 r;
} pc;

void main() {
  coopmat<A_TYPE, gl_ScopeSubgroup, M, K, gl_MatrixUseA> a;
  coopmat<B_TYPE, gl_ScopeSubgroup, K, N, gl_MatrixUseB> b;
  coopmat<C_TYPE, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> c;
  // Stride in elements of the array: a row of each row-major matrix.
  coopMatLoad(a, ABuf(pc.a).v, 0, K, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(b, BBuf(pc.b).v, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  coopMatLoad(c, CBuf(pc.c).v, 0, N, gl_CooperativeMatrixLayoutRowMajor);
  c = coopMatMulAdd(a, b, c);
  coopMatStore(c, RBuf(pc.r).v, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
