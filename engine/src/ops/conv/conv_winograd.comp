// conv as Winograd's F(2x2, 3x3) (conv_winograd.cpp): with B, G, A the transforms of Lavin and
// Gray's algorithm, an output tile Y = A^T [U . V] A sums, per channel, U = G g G^T (the 3 x 3
// kernel) times V = B^T d B (the 4 x 4 input patch). The sums over channels are dot's batched
// GEMM (16 products); these passes make U (PASS 0) and V (PASS 1) and turn the products into
// outputs (PASS 2). Every coefficient is 0, +-1 or 1/2: exact in binary. An output whose value
// is not finite is computed again directly (the transforms' sums can meet Inf - Inf where the
// direct sum has Inf, or overflow where it does not), so Inf and NaN come out as the direct
// sum's. PASS 2 stores through STORE_RESULT (offset_epilogue.glsl: an epilogue where the conv
// has one). One invocation per (filter, channel), (tile, channel) or (tile, filter).
// Defines: PASS, WT (float or double), WT_F64, WT_ALIGN, WG; PASS 2: ACC (WT), OUT_STORE,
// OUT_ALIGN, STORE_OUT(v), EPILOGUE.
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
#include "conv_winograd_push.h"

layout(push_constant, std430) uniform Push { WinogradPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ParamBuf { WinogradParams p; };
layout(buffer_reference, std430, buffer_reference_align = WT_ALIGN) readonly buffer Src { WT v[]; };
#if PASS == 2
layout(buffer_reference, std430, buffer_reference_align = OUT_ALIGN) writeonly buffer Dst { OUT_STORE v[]; };
#define NXV_EPILOGUE_PARAMS (ParamBuf(pc.params_addr).p.epi)
#include "offset_epilogue.glsl"
#else
layout(buffer_reference, std430, buffer_reference_align = WT_ALIGN) writeonly buffer Dst { WT v[]; };
#endif

#if WT_F64
bool nonfinite(WT x) { return (unpackDouble2x32(x).y & 0x7ff00000u) == 0x7ff00000u; }
#else
bool nonfinite(WT x) { return (floatBitsToUint(x) & 0x7f800000u) == 0x7f800000u; }
#endif

#if PASS == 2
// The output at (item, filter, row, column) as the direct sum over channels and kernel
// positions.
WT direct(WinogradParams q, uint item, uint k, int oy, int ox) {
  Src in_ = Src(pc.in_addr), ker = Src(pc.ker_addr);
  WT acc = WT(0);
  for (uint c = 0u; c < q.channels; ++c)
    [[unroll]] for (int r = 0; r < 3; ++r) {
      int y = oy - q.pad_y + r;
      if (y < 0 || y >= q.in_h) continue;
      [[unroll]] for (int s = 0; s < 3; ++s) {
        int x = ox - q.pad_x + s;
        if (x < 0 || x >= q.in_w) continue;
        acc += in_.v[int(item) * q.in_n + int(c) * q.in_c + y * q.in_y + x * q.in_x] *
               ker.v[int(k) * q.k_o + int(c) * q.k_c + r * q.k_y + s * q.k_x];
      }
    }
  return acc;
}
#endif

void main() {
  WinogradParams q = ParamBuf(pc.params_addr).p;
  Src src = Src(pc.src_addr);
  Dst dst = Dst(pc.dst_addr);
  uint step = gl_NumWorkGroups.x * WG;
#if PASS == 0
  // U = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1].
  uint total = q.filters * q.channels;
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += step) {
    uint k = idx / q.channels, c = idx - k * q.channels;
    WT g[3][3];
    [[unroll]] for (int r = 0; r < 3; ++r)
      [[unroll]] for (int s = 0; s < 3; ++s) g[r][s] = src.v[int(k) * q.k_o + int(c) * q.k_c + r * q.k_y + s * q.k_x];
    WT t[4][3];
    [[unroll]] for (int s = 0; s < 3; ++s) {
      t[0][s] = g[0][s];
      t[1][s] = (g[0][s] + g[1][s] + g[2][s]) * WT(0.5);
      t[2][s] = (g[0][s] - g[1][s] + g[2][s]) * WT(0.5);
      t[3][s] = g[2][s];
    }
    [[unroll]] for (int r = 0; r < 4; ++r) {
      WT u[4] = {t[r][0], (t[r][0] + t[r][1] + t[r][2]) * WT(0.5), (t[r][0] - t[r][1] + t[r][2]) * WT(0.5), t[r][2]};
      [[unroll]] for (int s = 0; s < 4; ++s) dst.v[uint(r * 4 + s) * q.u_i + c * q.u_c + k * q.u_k] = u[s];
    }
  }
#elif PASS == 1
  // V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; outside the input d is 0.
  uint total = q.tiles * q.channels;
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += step) {
    uint p, c;
    if (q.channel_fast != 0u) {
      p = idx / q.channels;
      c = idx - p * q.channels;
    } else {
      c = idx / q.tiles;
      p = idx - c * q.tiles;
    }
    uint item = p / q.tiles_item, rest = p - item * q.tiles_item;
    uint ty = rest / q.tiles_x, tx = rest - ty * q.tiles_x;
    int y0 = int(ty) * 2 - q.pad_y, x0 = int(tx) * 2 - q.pad_x;
    int base = int(item) * q.in_n + int(c) * q.in_c;
    WT d[4][4];
    [[unroll]] for (int r = 0; r < 4; ++r)
      [[unroll]] for (int s = 0; s < 4; ++s) {
        int y = y0 + r, x = x0 + s;
        d[r][s] = y >= 0 && y < q.in_h && x >= 0 && x < q.in_w ? src.v[base + y * q.in_y + x * q.in_x] : WT(0);
      }
    WT t[4][4];
    [[unroll]] for (int s = 0; s < 4; ++s) {
      t[0][s] = d[0][s] - d[2][s];
      t[1][s] = d[1][s] + d[2][s];
      t[2][s] = d[2][s] - d[1][s];
      t[3][s] = d[1][s] - d[3][s];
    }
    [[unroll]] for (int r = 0; r < 4; ++r) {
      WT v[4] = {t[r][0] - t[r][2], t[r][1] + t[r][2], t[r][2] - t[r][1], t[r][1] - t[r][3]};
      [[unroll]] for (int s = 0; s < 4; ++s) dst.v[uint(r * 4 + s) * q.v_i + p * q.v_p + c * q.v_c] = v[s];
    }
  }
#else
  // Y = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1]; the tile's outputs past the output's edge are not stored.
  uint total = q.tiles * q.filters;
  WT zero = WT(q.zero);
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += step) {
    uint p, k;
    if (q.channel_fast != 0u) {
      p = idx / q.filters;
      k = idx - p * q.filters;
    } else {
      k = idx / q.tiles;
      p = idx - k * q.tiles;
    }
    WT m[4][4];
    [[unroll]] for (int r = 0; r < 4; ++r)
      [[unroll]] for (int s = 0; s < 4; ++s) m[r][s] = src.v[uint(r * 4 + s) * q.m_i + p * q.m_p + k * q.m_k];
    WT t[2][4];
    [[unroll]] for (int s = 0; s < 4; ++s) {
      t[0][s] = m[0][s] + m[1][s] + m[2][s];
      t[1][s] = m[1][s] - m[2][s] - m[3][s];
    }
    uint item = p / q.tiles_item, rest = p - item * q.tiles_item;
    uint ty = rest / q.tiles_x, tx = rest - ty * q.tiles_x;
    uint o_item = (q.item0 + item) * q.o_n + k * q.o_k;
    [[unroll]] for (int r = 0; r < 2; ++r) {
      WT y[2] = {t[r][0] + t[r][1] + t[r][2], t[r][1] - t[r][2] - t[r][3]};
      [[unroll]] for (int s = 0; s < 2; ++s) {
        int oy = int(ty) * 2 + r, ox = int(tx) * 2 + s;
        if (oy >= q.out_h || ox >= q.out_w) continue;
        WT value = y[s];
        if (nonfinite(value)) value = direct(q, item, k, oy, ox);
        uint o = o_item + uint(oy) * q.o_y + uint(ox) * q.o_x;
        dst.v[o] = STORE_RESULT(o, value + zero);
      }
    }
  }
#endif
}
