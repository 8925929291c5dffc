// Materializing views: a transposing copy where the view's stride-1 axis is not the output's
// last one (on GPUs through shared-memory tiles, reads and writes both coalesced; on CPU drivers
// in 4 x 4 register blocks where rows are vector-aligned), the strided copy otherwise; and the
// conversions the shape family's joins need.
#include <algorithm>
#include <cstdlib>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/glsl_words.hpp"
#include "memory/copy.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/shape/shape_lowering.hpp"
#include "ops/shape/transpose_push.h"

namespace nxv {
namespace {

constexpr uint32_t kVectorTile = 64, kVectorRows = 16;


struct Axis {
  int64_t size, in_stride, out_stride;
};

// The view's axes in output order, size-1 axes dropped and neighbours merged where the view
// steps through them as one.
std::vector<Axis> collapsed_axes(const Tensor& view, const Tensor& out) {
  std::vector<Axis> axes;
  for (size_t d = 0; d < view.shape.size(); ++d) {
    if (view.shape[d] == 1) continue;
    if (!axes.empty() && axes.back().in_stride == view.strides[d] * view.shape[d]) {
      axes.back().size *= view.shape[d];
      axes.back().in_stride = view.strides[d];
      axes.back().out_stride = out.strides[d];
      continue;
    }
    axes.push_back({view.shape[d], view.strides[d], out.strides[d]});
  }
  return axes;
}

bool within_one_chunk(const Tensor& t) {
  int64_t last = t.offset;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.strides[d] < 0) return false;
    last += (t.shape[d] - 1) * t.strides[d];
  }
  uint64_t e = dtype_size(t.type), chunk = t.buffer->chunk_bytes();
  return last - t.offset < (int64_t(1) << 31) && uint64_t(t.offset) * e / chunk == uint64_t(last) * e / chunk;
}

// Elements per global load and store of the tiled kernel: 4 where the element is at most 4
// bytes and every row start on both sides falls on a 4-element boundary, else 1. `requested`
// (tuning's transpose.vec) overrides the 4; 1 turns vectors off.
uint32_t vector_width(const Tensor& view, const Tensor& out, const std::vector<Axis>& axes,
                      const Axis& p, const Axis& l, uint32_t requested) {
  uint32_t vec = requested ? requested : 4;
  size_t e = dtype_size(view.type);
  if (vec != 4 || e > 4) return 1;
  if (view.offset % vec || out.offset % vec || l.in_stride % vec || p.out_stride % vec) return 1;
  for (const Axis& x : axes)
    if (&x != &p && &x != &l && (x.in_stride % vec || x.out_stride % vec)) return 1;
  if (view.buffer->address_at(uint64_t(view.offset) * e) % (vec * e) ||
      out.buffer->address_at(uint64_t(out.offset) * e) % (vec * e))
    return 1;
  return vec;
}

// The push constants' batch axes (every axis but p and l) and the tiles of `tile` x `tile`
// they give; false where the tile count overflows 32 bits.
bool fill_batches(TransposePush& push, const std::vector<Axis>& axes, const Axis& p, const Axis& l, uint32_t tile) {
  push.p_size = uint32_t(p.size), push.l_size = uint32_t(l.size);
  push.l_in_stride = uint32_t(l.in_stride), push.p_out_stride = uint32_t(p.out_stride);
  push.tiles_p = uint32_t((p.size + tile - 1) / tile);
  push.tiles_l = uint32_t((l.size + tile - 1) / tile);
  uint64_t tiles = uint64_t(push.tiles_p) * push.tiles_l;
  for (const Axis& x : axes) {
    if (&x == &p || &x == &l) continue;
    push.batch_shape[push.batch_rank] = uint32_t(x.size);
    push.batch_in_stride[push.batch_rank] = uint32_t(x.in_stride);
    push.batch_out_stride[push.batch_rank] = uint32_t(x.out_stride);
    ++push.batch_rank;
    tiles *= uint64_t(x.size);
  }
  push.tiles = uint32_t(tiles);
  return tiles < (uint64_t(1) << 32);
}

void launch_transpose(LaunchBuilder& builder, const Kernel& kernel, uint32_t groups,
                         const TransposePush& push, const Tensor& view, uint32_t view_slot, const Tensor& out,
                         uint32_t out_slot) {
  uint64_t e = dtype_size(view.type);
  Launch& launch = builder.launch(kernel, {groups, 1, 1}, push,
                                  {{offsetof(TransposePush, out_addr), {out_slot, uint64_t(out.offset) * e}},
                                   {offsetof(TransposePush, in_addr), {view_slot, uint64_t(view.offset) * e}}});
  builder.use(launch, view_slot, Access::Read);
  builder.use(launch, out_slot, Access::Write);
}

// A variant of transpose.comp: a tile of TILE x TILE elements, ROWS rows of invocations, VEC
// elements a load.
struct TransposeVariant {
  static constexpr const char* kTemplate = "transpose";
  uint8_t bytes = 4;  // 1, 2, 4, 8 or 16
  uint32_t tile = NXV_TRANSPOSE_TILE, rows = 8, vec = 1;

  auto fields() const { return std::tie(bytes, tile, rows, vec); }
  KernelKey source() const {
    KernelKey key{kTemplate,
                  {{"ELEM", glsl_word_type(bytes)}, {"ELEM_BYTES", std::to_string(bytes)},
                   {"ELEM_ALIGN", std::to_string(std::min<size_t>(bytes, 16))},
                   {"TILE", std::to_string(tile)}, {"ROWS", std::to_string(rows)}, {"VEC", std::to_string(vec)}},
                  vec > 1 ? tile / vec * rows : tile};
    key.workgroup_y = vec > 1 ? 1 : rows;
    return key;
  }
  // The default tiles: scalar, and vectors of four for elements of up to 4 bytes.
  static std::vector<TransposeVariant> declared(const DeviceInfo&) {
    std::vector<TransposeVariant> all;
    for (uint8_t bytes : {1, 2, 4, 8, 16}) {
      all.push_back({bytes, NXV_TRANSPOSE_TILE, 8, 1});
      if (bytes <= 4) all.push_back({bytes, kVectorTile, kVectorRows, 4});
    }
    return all;
  }
};

// A variant of transpose_blocks.comp (CPU drivers: 4 x 4 blocks in registers).
struct TransposeBlocksVariant {
  static constexpr const char* kTemplate = "transpose_blocks";
  static constexpr uint32_t kGroup = 64;
  uint8_t bytes = 4;

  auto fields() const { return std::tie(bytes); }
  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.defines = {{"ELEM", glsl_word_type(bytes)}, {"ELEM_BYTES", std::to_string(bytes)},
                   {"ELEM_ALIGN", std::to_string(bytes)}};
    key.workgroup_size = kGroup;
    return key;
  }
  static std::vector<TransposeBlocksVariant> declared(const DeviceInfo&) { return {{1}, {2}, {4}}; }
};

// CPU drivers: 4 x 4 blocks in registers (transpose_blocks.comp), for vector-aligned views.
void append_transpose_blocks(Device& device, LaunchBuilder& builder, const Tensor& view, uint32_t view_slot,
                             const Tensor& out, uint32_t out_slot, const std::vector<Axis>& axes, const Axis& p,
                             const Axis& l) {
  TransposePush push{};
  if (!fill_batches(push, axes, p, l, 4)) return append_copy(device, builder, view, view_slot, out, out_slot);
  size_t bytes = dtype_size(view.type);
  const Kernel& kernel = device.impl().kernels.get(TransposeBlocksVariant{uint8_t(bytes)});
  uint32_t groups = workgroups_for(*device.impl().core, push.tiles, TransposeBlocksVariant::kGroup);
  launch_transpose(builder, kernel, groups, push, view, view_slot, out, out_slot);
}

}  // namespace

void declare_transpose_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<TransposeVariant>(out, info);
  declare_variants<TransposeBlocksVariant>(out, info);
}

void append_materialize(Device& device, LaunchBuilder& builder, const Tensor& view, uint32_t view_slot,
                        const Tensor& out, uint32_t out_slot) {
  if (out.size() == 0) return;
  std::vector<Axis> axes = collapsed_axes(view, out);
  auto fastest = std::find_if(axes.begin(), axes.end(), [](const Axis& x) { return x.in_stride == 1; });
  bool tiled = axes.size() >= 2 && fastest != axes.end() && fastest != axes.end() - 1 &&
               axes.size() - 2 <= NXV_TRANSPOSE_MAX_BATCH && within_one_chunk(view) && within_one_chunk(out);
  if (!tiled) return append_copy(device, builder, view, view_slot, out, out_slot);

  FeatureSet features;
  features.add_type(view.type);
  features.check(*device.impl().core, "transpose");
  size_t bytes = dtype_size(view.type);
  const TransposeTuning& tuned = tuning().transpose;
  uint32_t tuned_tile = tuned.tile, tuned_rows = tuned.rows, tuned_vec = tuned.vec;
  const Axis& p = *fastest;
  const Axis& l = axes.back();
  uint32_t vec = vector_width(view, out, axes, p, l, tuned_vec);
  // CPU drivers take 4 x 4 register blocks; tuning's transpose.blocks 1 takes them on any
  // device, 2 the tiles (tests).
  bool cpu = device.impl().core->profile().cpu_driver;
  uint32_t blocks = tuned.blocks;
  if (vec == 4 && (blocks == 1 || (cpu && blocks != 2)))
    return append_transpose_blocks(device, builder, view, view_slot, out, out_slot, axes, p, l);
  uint32_t tile = tuned_tile ? tuned_tile : vec > 1 ? kVectorTile : NXV_TRANSPOSE_TILE;
  uint32_t rows = tuned_rows ? tuned_rows : vec > 1 ? kVectorRows : 8;
  // The vector kernel's lane layout: warps of 8 vectors by 4 rows tiling the tile's width.
  if (vec > 1 && (tile % (8 * vec) != 0 || rows % 4 != 0 || tile % rows != 0)) vec = 1;
  const Kernel& kernel = device.impl().kernels.get(TransposeVariant{uint8_t(bytes), tile, rows, vec});
  TransposePush push{};
  if (!fill_batches(push, axes, p, l, tile)) return append_copy(device, builder, view, view_slot, out, out_slot);
  uint32_t groups = uint32_t(std::min<uint64_t>(push.tiles, std::min<uint64_t>(device.impl().core->info().max_workgroup_count[0], 65535)));
  if (cpu) groups = std::min<uint32_t>(groups, 64);
  launch_transpose(builder, kernel, groups, push, view, view_slot, out, out_slot);
}

BoundTensor converted(Device& device, LaunchBuilder& builder, const BoundTensor& input, DType type) {
  if (input.tensor.type == type) return input;
  Tensor out = empty(device, type, input.tensor.shape);
  uint32_t slot = builder.bind(out.buffer);
  append_as_type(device, builder, input.tensor, input.slot, out, slot);
  return {out, slot};
}

}  // namespace nxv
