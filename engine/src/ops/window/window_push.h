// Push constants and parameter block of the window kernels (window.comp,
// window_scatter.comp), declared once for C++ (ops/window) and GLSL. Axes are the tensor's
// after adjacent axes that the window passes through unchanged are merged (at most 8); the
// kernels know their count (NR) and the window's extent per axis at compile time. Divisions
// by run-time extents go through multipliers: n / d = (umulHi(n, magic) + n) >> shift for
// n < 2^31 (nxv_fastdiv in the kernels).
#ifndef NXV_WINDOW_PUSH_H
#define NXV_WINDOW_PUSH_H
#include "nxv_shared.h"

#define NXV_WIN_MAX_RANK 8

NXV_STRUCT(WindowParams) {
  NXV_U32 out_shape[NXV_WIN_MAX_RANK];  // the result's extents (window ops: windows; scatter: the tensor's)
  NXV_U32 out_magic[NXV_WIN_MAX_RANK];
  NXV_U32 out_shift[NXV_WIN_MAX_RANK];
  NXV_U32 in_shape[NXV_WIN_MAX_RANK];   // the tensor's extents
  NXV_I32 in_stride[NXV_WIN_MAX_RANK];  // the tensor's element strides
  NXV_U32 stride[NXV_WIN_MAX_RANK];     // the window's
  NXV_U32 stride_magic[NXV_WIN_MAX_RANK];
  NXV_U32 stride_shift[NXV_WIN_MAX_RANK];
  NXV_I32 pad_lo[NXV_WIN_MAX_RANK];
  NXV_I32 dilation[NXV_WIN_MAX_RANK];
  NXV_U32 windows[NXV_WIN_MAX_RANK];    // window_scatter_*: windows per axis (the source's extents)
  NXV_U32 src_pitch[NXV_WIN_MAX_RANK];  // window_scatter_*: the source's row-major pitches
  NXV_U32 out_pitch[NXV_WIN_MAX_RANK];  // tiled window_scatter_*: the result's row-major pitches
};

NXV_STRUCT(WindowPush) {
  NXV_ADDR out_addr;
  NXV_ADDR in_addr;
  NXV_ADDR params_addr;
  NXV_ADDR source_addr;  // window_scatter_*: one value per window
  NXV_ADDR init_addr;    // window_scatter_*: the scalar every position starts from
  NXV_U32 n;             // work items: outputs, runs of VW outputs (window.comp), or windows (tiled scatter)
  NXV_U32 last_extent;   // window.comp with VW > 1: the result's last extent
  NXV_U32 last_runs;     // ... and the runs of VW outputs along it
  NXV_U32 pen_extent;    // window.comp with VH > 1: the result's extent along the axis before the last
  NXV_U32 pen_blocks;    // ... and the blocks of VH outputs along it
};

#endif
