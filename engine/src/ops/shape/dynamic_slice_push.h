// Push constants and parameter block of slice and put_slice with start indices given as
// tensors (ops/shape/dynamic_slice.cpp, dynamic_slice.comp): the kernel reads each start,
// clamps it as Nx does, and copies the region from there, so no start is read on the host.
#ifndef NXV_DYNAMIC_SLICE_PUSH_H
#define NXV_DYNAMIC_SLICE_PUSH_H
#include "nxv_shared.h"

#define NXV_DYNAMIC_SLICE_MAX_RANK 8
#define NXV_DYNAMIC_SLICE_MAX_CHUNKS 16

NXV_STRUCT(DynamicSliceParams) {
  NXV_ADDR start_addr[NXV_DYNAMIC_SLICE_MAX_RANK];  // the 4-byte word holding a dynamic start
  NXV_U32 shape[NXV_DYNAMIC_SLICE_MAX_RANK];        // the region (slice's output, put_slice's update)
  NXV_U32 src_stride[NXV_DYNAMIC_SLICE_MAX_RANK];   // source elements per region step
  NXV_U32 dst_stride[NXV_DYNAMIC_SLICE_MAX_RANK];   // put_slice: output pitches
  NXV_U32 start_stride[NXV_DYNAMIC_SLICE_MAX_RANK]; // elements one start moves the big side by
  NXV_U32 static_start[NXV_DYNAMIC_SLICE_MAX_RANK]; // clamped already (axes with a kind of 0)
  NXV_U32 limit[NXV_DYNAMIC_SLICE_MAX_RANK];        // the largest start: dim - length
  // 0: static; else the start's bytes (1, 2, 4, 8) | 256 if signed | bit shift in the word << 16
  NXV_U32 start_kind[NXV_DYNAMIC_SLICE_MAX_RANK];
  NXV_U32 rank;
  NXV_U32 put;  // 0: slice (the big side is the source), 1: put_slice (the output)
  // A big side over several buffer chunks (chunk_shift != 0): its element `big_offset + i`
  // lies in chunk (index >> chunk_shift), at element (index & mask) of big_chunk[that].
  // chunk_shift == 0: the big side is addressed from in_addr / out_addr alone.
  NXV_U64 big_offset;
  NXV_ADDR big_chunk[NXV_DYNAMIC_SLICE_MAX_CHUNKS];
  NXV_U32 chunk_shift;
  NXV_U32 unused;
};

NXV_STRUCT(DynamicSlicePush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_ADDR params_addr;  // DynamicSliceParams
  NXV_U32 n;
  NXV_U32 start;         // linear region index of this launch's first element
};

#endif
