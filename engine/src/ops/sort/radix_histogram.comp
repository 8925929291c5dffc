// LSD radix sort, digit pass 1 of 3: every tile's count of each 8-bit digit of the keys
// (sort_keys.glsl), written to hist[(row * 256 + digit) * tiles_per_row + tile]. Counting is
// order-free, so shared atomics give deterministic counts.
// Defines: WG, TILES (tiles per workgroup), RAW, RAW_ALIGN, and sort_keys.glsl's.
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

layout(local_size_x_id = 0) in;

#include "sort_push.h"
#include "sort_keys.glsl"

layout(push_constant, std430) uniform Params { RadixPush pc; };
layout(buffer_reference, std430, buffer_reference_align = RAW_ALIGN) readonly buffer KeyBuf { RAW v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer CountBuf { uint v[]; };

// A workgroup counts TILES consecutive tiles of a row, each into its own histogram (digit-major
// in shared memory), so that it writes each digit's counts of those tiles as one run of TILES
// words rather than a word apart from every other tile's, and its key loads run across the
// tiles' boundaries.
shared uint s_hist[TILES * 256];

void main() {
  uint tid = gl_LocalInvocationID.x;
  KeyBuf keys = KeyBuf(pc.keys_in);
  CountBuf hist = CountBuf(pc.hist);
  const uint tile_shift = uint(findMSB(pc.tile));  // tiles are powers of two
  const uint groups_per_row = (pc.tiles_per_row + uint(TILES) - 1u) / uint(TILES);
  const uint groups = pc.rows * groups_per_row;
  for (uint group = gl_WorkGroupID.x; group < groups; group += gl_NumWorkGroups.x) {
    for (uint d = tid; d < uint(TILES) * 256u; d += uint(WG)) s_hist[d] = 0u;
    barrier();
    uint row = group / groups_per_row, t0 = (group - row * groups_per_row) * uint(TILES);
    uint count = min(uint(TILES), pc.tiles_per_row - t0);
    uint start = t0 * pc.tile, end = min(start + count * pc.tile, pc.n);
    uint base = row * pc.n;
    // Eight loads in flight per invocation before their counts.
    for (uint k0 = start + tid; k0 < end; k0 += 8u * uint(WG)) {
      RAW raw[8];
      [[unroll]] for (uint i = 0u; i < 8u; ++i) {
        uint k = k0 + i * uint(WG);
        if (k < end) raw[i] = keys.v[base + k];
      }
      [[unroll]] for (uint i = 0u; i < 8u; ++i) {
        uint k = k0 + i * uint(WG);
        if (k < end) atomicAdd(s_hist[nxv_sort_digit(KEY(raw[i]), pc.shift) * uint(TILES) + ((k - start) >> tile_shift)], 1u);
      }
    }
    barrier();
    // Neighbouring invocations write a digit's neighbouring tiles.
    for (uint w = tid; w < 256u * count; w += uint(WG)) {
      uint d = w / count, i = w - d * count;
      hist.v[(row * 256u + d) * pc.tiles_per_row + t0 + i] = s_hist[d * uint(TILES) + i];
    }
    barrier();  // the next group clears s_hist
  }
}
