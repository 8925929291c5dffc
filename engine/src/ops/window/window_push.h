// Push constants and parameter block of the window kernels (window.comp,
// window_scatter.comp), declared once for C++ (ops/window) and GLSL. Axes come in two sets:
// the first `active` ones, where the window is wider than one element (looped over, in the
// input's axis order), then the others (one element each). Per axis: the output's extent and
// pitch (elements per step of its coordinate), the input's extent and element stride, the
// window's stride, low padding, extent and dilation.
#ifndef NXV_WINDOW_PUSH_H
#define NXV_WINDOW_PUSH_H
#include "nxv_shared.h"

#define NXV_WIN_MAX_RANK 8

NXV_STRUCT(WindowParams) {
  NXV_U32 rank;
  NXV_U32 window_size;  // elements in one window
  NXV_U32 out_pitch[NXV_WIN_MAX_RANK];
  NXV_U32 out_shape[NXV_WIN_MAX_RANK];
  NXV_U32 in_shape[NXV_WIN_MAX_RANK];
  NXV_I32 in_stride[NXV_WIN_MAX_RANK];
  NXV_U32 stride[NXV_WIN_MAX_RANK];
  NXV_I32 pad_lo[NXV_WIN_MAX_RANK];
  NXV_U32 window[NXV_WIN_MAX_RANK];
  NXV_U32 dilation[NXV_WIN_MAX_RANK];
  NXV_U32 src_pitch[NXV_WIN_MAX_RANK];  // window_scatter_*: the source's pitch
};

NXV_STRUCT(WindowPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_ADDR params_addr;
  NXV_ADDR source_addr;  // window_scatter_*: one value per window
  NXV_ADDR init_addr;    // window_scatter_*: the scalar every position starts from
  NXV_U32 n;             // output elements
};

#endif
