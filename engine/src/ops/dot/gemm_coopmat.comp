// Cooperative-matrix (tensor-core) GEMM: C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] for 16-bit
// float A and B (f16, or bf16: see below) accumulated in f32 fragments, or (ELEM8) 8-bit integer
// A and B accumulated in 32-bit integer fragments (FRAG_IN, FRAG_ACC: the fragment types)
// (VK_KHR_cooperative_matrix, subgroup scope), C stored as the output type (STORE_OUT) or, with
// split-K, as partial sums in the accumulator type for dot_split_sum.comp (same push struct and
// grid as gemm.comp).
// A workgroup computes a BM x BN tile; its NSG subgroups each own a WM x WN block of FM x FN
// accumulator fragments. The K loop stages BK-wide tiles of A and B through two shared-memory
// buffers (the next tile's global loads are in flight while the current one is multiplied;
// one barrier per step). Each tile is stored in shared memory along its operand's contiguous
// axis (rows padded by 8 elements against bank conflicts) and read into fragments as row- or
// column-major: a transposed operand costs nothing. Global reads go E elements (16 bytes: 8, or
// 16 of 8 bits) at a time where the operand allows (A_VEC/B_VEC: contiguous axis of stride 1,
// other strides, offset and the contiguous extent multiples of E), else element by element;
// either way zero outside the matrices, so any M, N, K is exact.
// The 16-bit values travel as bits (uint16_t / uvec4) everywhere; only the fragments of A and
// B have the float type. That is what lets the bf16 variant be this kernel compiled for f16
// and then retyped (NXV_SPIRV_BF16: kernels/spirv_bf16.hpp): glslang has no bfloat16 type.
// Defines: BM, BN, BK, WM, WN, FM, FN, FK, NSG (subgroups), SG (invocations per subgroup);
// A_ROW (A's tile is [m][k]: A is contiguous along k), else [k][m]; B_ROW (B's tile is [k][n]), else [n][k]; A_VEC, B_VEC;
// STORE_OUT(v), C_STORE, C_ALIGN (add_gemm_common_defines).
// CONV_A (conv's implicit GEMM, ops/conv/conv_im2col.cpp): A is not a matrix but gathered
// from a channels-last conv input at a_addr, 8 elements per load (conv_gather16.glsl, with NR
// and IDIL), through the conv's parameter block at epi_addr; needs A_ROW and one batch. C then
// goes straight to the conv's output through the block's output strides (with split-K, the
// partial sums at the same offsets), through its epilogue where it has one (EPILOGUE:
// offset_epilogue.glsl); CONV_LANES_M: lanes store along m, not n.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#if NXV_STORAGE8
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#endif
#if NXV_INT64
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x_id = 0) in;

#ifndef ELEM8
#define ELEM8 0
#endif
#ifndef FRAG_IN
#define FRAG_IN float16_t
#define FRAG_ACC float
#endif
// Elements per 16-byte chunk: the unit of the global reads, the shared rows and their padding.
#if ELEM8
const uint E = 16u;
#else
const uint E = 8u;
#endif

// No nxv_float_controls.glsl: the f32 accumulators live in the tensor cores, whose handling
// of subnormals no execution mode changes (the tier's tolerance allows for flushing); it is
// the configuration that was measured. A conv epilogue's chain takes them, as the
// elementwise kernels do.
#if defined(EPILOGUE) && CONV_A
#include "nxv_float_controls.glsl"
#endif
#include "nxv_math.glsl"
#include "gemm_push.h"

layout(push_constant, std430) uniform Params { GemmPush pc; };

#ifndef CONV_A
#define CONV_A 0
#endif
#if CONV_A
#include "nxv_fastdiv.glsl"
#include "conv_push.h"
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer ParamBuf {
  ConvParams p;
  int table[];  // NXV_CONV_TABLE_ROW(NR) ints per kernel position
};
#define V 8u
#include "conv_gather16.glsl"
#ifndef CONV_LANES_M
#define CONV_LANES_M 0
#endif
// STORE_RESULT(o, v): STORE_OUT(v), or through the conv's epilogue (EPILOGUE), whose
// parameters are inside the conv's block.
#ifdef EPILOGUE
#define ACC float
#define NXV_EPILOGUE_PARAMS (ParamBuf(pc.epi_addr).p.epi)
#endif
#include "offset_epilogue.glsl"

// Where output row gm (batch item, output position) starts in the conv's output.
uint conv_output_row(ParamBuf P, uint gm) {
  uint item = nxv_fastdiv(gm, P.p.pos_magic, P.p.pos_shift);
  uint rest = gm - item * P.p.positions;
  uint o = item * P.p.out_n;
  [[unroll]] for (int d = NR - 1; d >= 0; --d) {
    uint q = nxv_fastdiv(rest, P.p.out_magic[d], P.p.out_shift[d]);
    o += (rest - q * P.p.out_ext[d]) * P.p.out_sp[d];
    rest = q;
  }
  return o;
}
#endif

layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer Bits1 { uint16_t v[]; };
#if ELEM8
layout(buffer_reference, std430, buffer_reference_align = 1) readonly buffer Bytes1 { uint8_t v[]; };
#endif
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Bits8 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = C_ALIGN) writeonly buffer CBuf { C_STORE v[]; };
layout(buffer_reference, std430) writeonly buffer PartBuf { FRAG_ACC v[]; };

// Shared tiles: rows along the operand's contiguous axis, PITCH elements apart.
#if A_ROW
const uint A_ROWS = BM, A_COLS = BK;
#else
const uint A_ROWS = BK, A_COLS = BM;
#endif
#if B_ROW
const uint B_ROWS = BK, B_COLS = BN;
#else
const uint B_ROWS = BN, B_COLS = BK;
#endif
const uint A_PITCH = A_COLS + E, B_PITCH = B_COLS + E;
// In uvec4 entries (E elements).
const uint A_PE = A_PITCH / E, B_PE = B_PITCH / E;
const uint A_STAGE = A_ROWS * A_PE, B_STAGE = B_ROWS * B_PE;
const uint STAGE = A_STAGE + B_STAGE;
const uint WG = NSG * SG;  // the workgroup (the host requires subgroups of SG where it can)
const uint A_CHUNKS = A_ROWS * (A_COLS / E), B_CHUNKS = B_ROWS * (B_COLS / E);
const uint LA = (A_CHUNKS + WG - 1u) / WG, LB = (B_CHUNKS + WG - 1u) / WG;
const uint TM = WM / FM, TN = WN / FN;
shared uvec4 sh[2u * STAGE];
shared FRAG_ACC scratch[NSG * FM * FN];  // one accumulator fragment per subgroup, for the stores

struct Tile {
  uint abase, bbase, m0, n0, k_end;
#if CONV_A
  GatherRow rows[LA];  // the A-tile rows this invocation loads
#endif
};

// E consecutive elements of an operand along its contiguous axis, as a uvec4 of bits:
// `outer`/`inner` are the tile-relative row and first column, in the operand's (rows, cols).
uvec4 load8(uvec2 addr, uint base, uint outer_g, uint inner_g, uint outer_n, uint inner_n, uint s_outer,
            uint s_inner, bool vec) {
  if (outer_g >= outer_n || inner_g >= inner_n) return uvec4(0u);
  uint e = base + outer_g * s_outer + inner_g * s_inner;
  if (vec) return Bits8(addr).v[e / E];
#if ELEM8
  uint w[4];
  [[unroll]] for (uint q = 0u; q < 4u; ++q) {
    uint word = 0u;
    [[unroll]] for (uint j = 0u; j < 4u; ++j) {
      uint i = q * 4u + j;
      word |= (inner_g + i < inner_n ? uint(Bytes1(addr).v[e + i * s_inner]) : 0u) << (8u * j);
    }
    w[q] = word;
  }
  return uvec4(w[0], w[1], w[2], w[3]);
#else
  uint h[8];
  [[unroll]] for (uint j = 0u; j < 8u; ++j)
    h[j] = inner_g + j < inner_n ? uint(Bits1(addr).v[e + j * s_inner]) : 0u;
  return uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
#endif
}

void fetch(Tile t, uint k0, uint tid, out uvec4 ra[LA], out uvec4 rb[LB]) {
#if CONV_A
  // The workgroup spans whole rows of chunks (the host sees to it), so every chunk of this
  // invocation is at the same k: its table row is read once.
  ParamBuf P = ParamBuf(pc.epi_addr);
  uint k_at = k0 + (tid % (A_COLS / 8u)) * 8u;
  GatherK g = gather_k(P, min(k_at, t.k_end - 8u));
#endif
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint c = tid + l * WG;
    uint r = c / (A_COLS / E), c8 = (c % (A_COLS / E)) * E;
    ra[l] = uvec4(0u);
#if CONV_A
    // Rows past the tile's chunks or past m are marked absent in t.rows: zeros.
    ra[l] = gather16(pc.a_addr, P, t.rows[l], g, k_at < t.k_end);
#elif A_ROW
    if (c < A_CHUNKS) ra[l] = load8(pc.a_addr, t.abase, t.m0 + r, k0 + c8, pc.m, t.k_end, pc.sa_m, pc.sa_k, A_VEC != 0);
#else
    if (c < A_CHUNKS) ra[l] = load8(pc.a_addr, t.abase, k0 + r, t.m0 + c8, t.k_end, pc.m, pc.sa_k, pc.sa_m, A_VEC != 0);
#endif
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint c = tid + l * WG;
    uint r = c / (B_COLS / E), c8 = (c % (B_COLS / E)) * E;
    rb[l] = uvec4(0u);
    if (c < B_CHUNKS) {
#if B_ROW
      rb[l] = load8(pc.b_addr, t.bbase, k0 + r, t.n0 + c8, t.k_end, pc.n, pc.sb_k, pc.sb_n, B_VEC != 0);
#else
      rb[l] = load8(pc.b_addr, t.bbase, t.n0 + r, k0 + c8, pc.n, t.k_end, pc.sb_n, pc.sb_k, B_VEC != 0);
#endif
    }
  }
}

void stash(uint stage, uint tid, uvec4 ra[LA], uvec4 rb[LB]) {
  uint base = stage * STAGE;
  [[unroll]] for (uint l = 0u; l < LA; ++l) {
    uint c = tid + l * WG;
    if (c < A_CHUNKS) sh[base + (c / (A_COLS / E)) * A_PE + c % (A_COLS / E)] = ra[l];
  }
  [[unroll]] for (uint l = 0u; l < LB; ++l) {
    uint c = tid + l * WG;
    if (c < B_CHUNKS) sh[base + A_STAGE + (c / (B_COLS / E)) * B_PE + c % (B_COLS / E)] = rb[l];
  }
}

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  // This subgroup's block of the tile.
  uint wm0 = (sg / (BN / WN)) * WM, wn0 = (sg % (BN / WN)) * WN;
  uint tiles_n = (pc.n + BN - 1u) / BN, tiles_m = (pc.m + BM - 1u) / BM;
  CBuf c = CBuf(pc.c_addr);
  PartBuf part = PartBuf(pc.part_addr);
  for (uint z = gl_WorkGroupID.z; z < pc.batch * pc.splits; z += gl_NumWorkGroups.z) {
    uint bz = z / pc.splits, split = z % pc.splits;
    uint k_begin = split * pc.k_chunk, k_end = min(pc.k, k_begin + pc.k_chunk);
    uint cbase = bz * pc.m * pc.n, pbase = (split * pc.batch + bz) * pc.m * pc.n;
    for (uint tm = gl_WorkGroupID.y; tm < tiles_m; tm += gl_NumWorkGroups.y) {
      for (uint tn = gl_WorkGroupID.x; tn < tiles_n; tn += gl_NumWorkGroups.x) {
        Tile t;
        t.abase = bz * pc.sa_batch, t.bbase = bz * pc.sb_batch, t.m0 = tm * BM, t.n0 = tn * BN, t.k_end = k_end;
#if CONV_A
        [[unroll]] for (uint l = 0u; l < LA; ++l) {
          uint c = tid + l * WG;
          t.rows[l] = gather_row(ParamBuf(pc.epi_addr), t.m0 + c / (A_COLS / 8u), pc.m);
          t.rows[l].ok = t.rows[l].ok && c < A_CHUNKS;
        }
#endif
        coopmat<FRAG_ACC, gl_ScopeSubgroup, FM, FN, gl_MatrixUseAccumulator> acc[TM][TN];
        [[unroll]] for (uint i = 0u; i < TM; ++i)
          [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = coopmat<FRAG_ACC, gl_ScopeSubgroup, FM, FN, gl_MatrixUseAccumulator>(FRAG_ACC(0));
        uvec4 ra[LA], rb[LB];
        if (k_begin < k_end) {
          fetch(t, k_begin, tid, ra, rb);
          stash(0u, tid, ra, rb);
        }
        barrier();
        uint stage = 0u;
        for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
          bool more = k0 + BK < k_end;
          if (more) fetch(t, k0 + BK, tid, ra, rb);
          uint abase = stage * STAGE, bbase = abase + A_STAGE;
          [[unroll]] for (uint kk = 0u; kk < BK; kk += FK) {
            coopmat<FRAG_IN, gl_ScopeSubgroup, FM, FK, gl_MatrixUseA> fa[TM];
            coopmat<FRAG_IN, gl_ScopeSubgroup, FK, FN, gl_MatrixUseB> fb[TN];
            [[unroll]] for (uint i = 0u; i < TM; ++i) {
#if A_ROW
              coopMatLoad(fa[i], sh, abase + (wm0 + i * FM) * A_PE + kk / E, A_PE, gl_CooperativeMatrixLayoutRowMajor);
#else
              coopMatLoad(fa[i], sh, abase + kk * A_PE + (wm0 + i * FM) / E, A_PE, gl_CooperativeMatrixLayoutColumnMajor);
#endif
            }
            [[unroll]] for (uint j = 0u; j < TN; ++j) {
#if B_ROW
              coopMatLoad(fb[j], sh, bbase + kk * B_PE + (wn0 + j * FN) / E, B_PE, gl_CooperativeMatrixLayoutRowMajor);
#else
              coopMatLoad(fb[j], sh, bbase + (wn0 + j * FN) * B_PE + kk / E, B_PE, gl_CooperativeMatrixLayoutColumnMajor);
#endif
            }
            [[unroll]] for (uint i = 0u; i < TM; ++i)
              [[unroll]] for (uint j = 0u; j < TN; ++j) acc[i][j] = coopMatMulAdd(fa[i], fb[j], acc[i][j]);
          }
          if (more) stash(stage ^ 1u, tid, ra, rb);
          barrier();
          stage ^= 1u;
        }
        // Each fragment through this subgroup's scratch, then to C element by
        // element with the bounds and the output type's store.
        uint sbase = sg * FM * FN;
        [[unroll]] for (uint i = 0u; i < TM; ++i) {
          [[unroll]] for (uint j = 0u; j < TN; ++j) {
            coopMatStore(acc[i][j], scratch, sbase, FN, gl_CooperativeMatrixLayoutRowMajor);
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            // A constant trip count: every loop around an accumulator index must unroll, or
            // the accumulators live in local memory (measured: 31 TFLOP/s at 8192^3).
            [[unroll]] for (uint l = 0u; l < FM * FN / SG; ++l) {
#if CONV_A && CONV_LANES_M
              // Lanes along m: adjacent output positions, adjacent in a channels-first output.
              uint e = lane + l * SG, r = e % FM, q = e / FM;
#else
              uint e = lane + l * SG, r = e / FN, q = e % FN;
#endif
              uint gm = t.m0 + wm0 + i * FM + r, gn = t.n0 + wn0 + j * FN + q;
#if CONV_A
              // Straight into the conv's output layout, at a clamped (always existing) element
              // and outside the branch below: a loop inside it (the row's decomposition, the
              // epilogue's index) would keep the loops around the accumulators rolled.
              float v = scratch[sbase + r * FN + q];
              uint o = conv_output_row(ParamBuf(pc.epi_addr), min(gm, pc.m - 1u)) +
                       min(gn, pc.n - 1u) * ParamBuf(pc.epi_addr).p.out_o;
              C_STORE stored = STORE_RESULT(o, v);
              if (gm < pc.m && gn < pc.n) {
                if (pc.splits > 1u) part.v[pbase + o] = v;
                else c.v[o] = stored;
              }
#else
              if (gm < pc.m && gn < pc.n) {
                FRAG_ACC v = scratch[sbase + e];
                if (pc.splits > 1u) part.v[pbase + gm * pc.n + gn] = v;
                else c.v[cbase + gm * pc.n + gn] = STORE_OUT(v);
              }
#endif
            }
            subgroupBarrier();
          }
        }
      }
    }
  }
}
