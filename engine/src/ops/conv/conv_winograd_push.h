// Push constants and parameter block of conv's Winograd tier (conv_winograd.cpp,
// conv_winograd.comp), declared once for C++ and GLSL. Transformed tensors: U (the kernel,
// 16 x channels x filters), V (the input, 16 x tiles x channels) and M (their products,
// 16 x tiles x filters), each addressed through its three strides; a tile is 2 x 2 outputs of
// one batch item, tiles numbered (item, tile row, tile column).
#ifndef NXV_CONV_WINOGRAD_PUSH_H
#define NXV_CONV_WINOGRAD_PUSH_H
#include "conv_push.h"
#include "nxv_shared.h"

NXV_STRUCT(WinogradPush) {
  NXV_ADDR src_addr;     // pass 0: the kernel; 1: the input; 2: M
  NXV_ADDR dst_addr;     // pass 0: U; 1: V; 2: the output (its first element)
  NXV_ADDR in_addr;      // pass 2: the input and the kernel, for outputs computed directly
  NXV_ADDR ker_addr;
  NXV_ADDR params_addr;  // WinogradParams
};

NXV_STRUCT(WinogradParams) {
  NXV_U32 channels;
  NXV_U32 filters;
  NXV_U32 tiles;         // in this launch: its batch items' tiles
  NXV_U32 tiles_x;       // tiles per row of an item
  NXV_U32 tiles_item;    // tiles per item
  NXV_U32 channel_fast;  // pass 1: invocations run along channels (else along tiles); pass 2: along filters
  NXV_I32 in_h;          // the input's spatial extents
  NXV_I32 in_w;
  NXV_I32 out_h;         // the output's
  NXV_I32 out_w;
  NXV_I32 pad_y;         // low padding (negative: cropped)
  NXV_I32 pad_x;
  NXV_I32 in_n;          // input strides: batch item, channel, row, column
  NXV_I32 in_c;
  NXV_I32 in_y;
  NXV_I32 in_x;
  NXV_I32 k_o;           // kernel strides: filter, channel, row, column
  NXV_I32 k_c;
  NXV_I32 k_y;
  NXV_I32 k_x;
  NXV_U32 o_n;           // output strides: batch item, filter, row, column
  NXV_U32 o_k;
  NXV_U32 o_y;
  NXV_U32 o_x;
  NXV_U32 u_i;           // U: per transform element, channel, filter
  NXV_U32 u_c;
  NXV_U32 u_k;
  NXV_U32 v_i;           // V: per transform element, tile, channel
  NXV_U32 v_p;
  NXV_U32 v_c;
  NXV_U32 m_i;           // M: per transform element, tile, filter
  NXV_U32 m_p;
  NXV_U32 m_k;
  NXV_U32 zero;          // 0, added to each output: a -0.0 sum becomes +0.0 as the direct sum's
  NXV_U32 item0;         // pass 2: the launch's first batch item (output offsets are the whole output's)
  OffsetEpilogueParams epi;  // pass 2 with an epilogue (conv_epilogue.hpp)
};

#endif
