#include "ops/conv/conv_kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/tuning.hpp"
#include "kernels/fast_division.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "ops/conv/conv_push.h"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

}  // namespace

// The parameter block: ConvParams, then the kernel-position table (conv_push.h).
std::vector<std::byte> conv_params(const ConvPlan& plan, const ConvInput& in, const std::vector<int64_t>& os,
                                   const StoreEpilogue* epi) {
  const ConvGeometry& g = plan.geometry;
  const ConvAttrs& a = plan.attrs;
  size_t r = g.spatial;
  ConvParams p{};
  p.in_n = int32_t(in.strides[0]);
  p.in_c = int32_t(in.strides[1]);
  // Group g reads batch items g * out_batch.. (batch groups) or channels g * ci.. (feature groups).
  p.in_group = int32_t(a.batch_group_size > 1 ? g.out_batch * in.strides[0] : g.ci * in.strides[1]);
  p.ci = uint32_t(g.ci);
  fast_division(p.ci, p.ci_magic, p.ci_shift);
  p.positions = uint32_t(g.positions);
  fast_division(p.positions, p.pos_magic, p.pos_shift);
  p.out_n = uint32_t(os[0]);
  p.out_o = uint32_t(os[1]);
  for (size_t d = 0; d < r; ++d) {
    p.out_ext[d] = uint32_t(g.out_spatial[d]);
    fast_division(p.out_ext[d], p.out_magic[d], p.out_shift[d]);
    p.out_sp[d] = uint32_t(os[2 + d]);
    p.in_ext[d] = int32_t(dilated_extent(g.in_spatial[d], a.input_dilation[d]));
    p.in_sp[d] = int32_t(in.strides[2 + d]);
    p.stride[d] = int32_t(a.strides[d]);
    p.pad_lo[d] = int32_t(a.padding[d].first);
    p.idil[d] = uint32_t(a.input_dilation[d]);
    fast_division(p.idil[d], p.idil_magic[d], p.idil_shift[d]);
  }
  // An epilogue's parameters travel inside the block (a launch has one).
  if (epi) std::memcpy(&p.epi, epi->params.data(), sizeof p.epi);
  // One row per kernel position, row-major over the kernel's spatial extents.
  size_t row = NXV_CONV_TABLE_ROW(r);
  std::vector<int32_t> table(size_t(g.kernel_positions) * row);
  for (int64_t q = 0; q < g.kernel_positions; ++q) {
    int64_t rest = q, offset = 0;
    for (size_t d = r; d-- > 0;) {
      int64_t step = (rest % g.kernel_spatial[d]) * a.kernel_dilation[d];
      rest /= g.kernel_spatial[d];
      table[size_t(q) * row + 1 + d] = int32_t(step);
      offset += step * in.strides[2 + d];
    }
    // Used only where the position is inside the input: then it fits 31 bits.
    table[size_t(q) * row] = int32_t(uint32_t(uint64_t(offset)));
  }
  std::vector<std::byte> bytes(sizeof p + table.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), &p, sizeof p);
  if (!table.empty()) std::memcpy(bytes.data() + sizeof p, table.data(), table.size() * sizeof(int32_t));
  return bytes;
}

void append_conv_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out_type, const ConvPlan& plan,
                      const ConvInput& input, const GemmOperand& kernel, BufferRef out,
                      const std::vector<int64_t>& out_strides, const StoreEpilogue* epi) {
  const DeviceCore& core = *impl.core;
  const ConvGeometry& g = plan.geometry;
  AccType acc = dot_acc_type(out_type);
  GemmShape shape{g.groups, g.m(), g.group_filters, g.k()};
  GemmTile tile = choose_gemm_tile(core, shape, acc);
  // CPU drivers: dot's CPU tile (8 x 32, one row block) ran 8x64x28x28 * 64x64x3x3 at 1.3
  // GFLOP/s on lavapipe (2 busy cores); 32 x 64 with 4 x 4 per invocation at 2.4-4.7 (fewer
  // barriers per product), 64 x 64 with 8 x 8 at 3.5-5.9 but compiling 2.5x slower (each
  // layout, type and rank is a compile). Tuning's dot.tile still overrides.
  bool forced = tuning().dot.tile.has_value();
  if (gemm_cpu_paths(core) && !forced && acc_bytes(acc) <= 8 && shape.m >= 32 && shape.n >= 16)
    tile = {32, 64, 16, 4, 4};
  // The A tile along k where the input's channels are adjacent (channels last), else along m.
  bool a_k_unit = input.strides[1] == 1 && g.ci > 1;
  // GPUs, the 8x8 register tile: subgroups as blocks of 4 x 8 invocations, as dot's; where the
  // A tile is read along m, 64-row tiles with subgroups of 16 x 2 (bench/RESULTS.md).
  uint32_t warp_x = 0;
  if (!gemm_cpu_paths(core) && tile.tm == 8 && tile.tn == 8) {
    warp_x = 4;
    if (!forced && !a_k_unit && tile.bm == 128 && tile.bn == 128) tile.bm = 64, warp_x = 16;
  }
  bool idil = std::any_of(plan.attrs.input_dilation.begin(), plan.attrs.input_dilation.end(),
                          [](int64_t x) { return x > 1; });
  GemmTileOpts o;
  o.a_k_unit = a_k_unit;
  o.b_n_unit = kernel.strides[2] == 1;
  o.vec4_shared = gemm_vec4_shared(tile, acc);
  o.warp_x = o.vec4_shared ? gemm_warp_x(core, tile, warp_x) : 0;
  // Four adjacent channels per load where every input stride and the offset are multiples of
  // four (a vector then never leaves one kernel position: ci % 4 == 0).
  bool in_strides4 = std::all_of(input.strides.begin(), input.strides.end(), [](int64_t s) { return s % 4 == 0 || s == 1; });
  o.a_vec4 = o.a_k_unit && g.ci % 4 == 0 && in_strides4 && tile.bk % 4 == 0 &&
             gemm_operand_vec4(core, input.type, {0, 4, 1}, input.ref.byte_offset, 2, 4, 4);
  o.b_vec4 = o.b_n_unit ? gemm_operand_vec4(core, kernel.type, kernel.strides, kernel.ref.byte_offset, 2,
                                            g.group_filters, tile.bn)
                        : gemm_operand_vec4(core, kernel.type, kernel.strides, kernel.ref.byte_offset, 1, g.k(), tile.bk);
  // A step of BK never straddles two kernel positions where BK divides the channels (and the
  // splits, which split_k aligns to BK then).
  bool kalign = g.ci % tile.bk == 0;
  // Vectors along k never straddle a split.
  bool k_vectors = o.a_vec4 || (o.b_vec4 && !o.b_n_unit);
  uint64_t total = uint64_t(shape_size(g.canonical_out()));
  uint64_t tiles = uint64_t(g.groups) * uint64_t((g.m() + tile.bm - 1) / tile.bm) *
                   uint64_t((g.group_filters + tile.bn - 1) / tile.bn);
  auto [splits, k_chunk] = split_k(core, tiles, uint64_t(g.k()), total, 256, 16, kalign ? tile.bk : k_vectors ? 4 : 1);
  VariantKey variant{.family = uint16_t(FamilyId::conv), .op = 0};
  variant.types = {out_type, input.type, kernel.type};
  variant.type_count = 3;
  variant.layout = uint8_t((o.a_k_unit ? 1 : 0) | (o.b_n_unit ? 2 : 0) | (o.vec4_shared ? 4 : 0) | (idil ? 8 : 0) |
                           (kalign ? 16 : 0));
  variant.tile = pack_gemm_tile(tile);
  variant.switches = uint32_t(g.spatial) | (o.switches() << 8);
  const Kernel& k = *epilogue_kernel(impl, variant, epi, [&] {
    KernelKey key;
    key.name = "conv_gemm";
    key.workgroup_size = tile.invocations();
    auto& d = key.defines;
    add_gemm_common_defines(d, out_type, input.type, kernel.type, acc);
    add_gemm_tile_defines(d, tile, acc, o, input.type, kernel.type);
    add_gemm_operand_defines(d, input.type, kernel.type, acc);
    d.emplace_back("NR", std::to_string(g.spatial));
    d.emplace_back("IDIL", idil ? "1" : "0");
    d.emplace_back("KALIGN", kalign ? "1" : "0");
    append_glsl_use_defines(d);
    return key;
  });
  ConvPush push{};
  push.m = uint32_t(g.m()), push.n = uint32_t(g.group_filters), push.k = uint32_t(g.k());
  push.groups = uint32_t(g.groups);
  push.splits = splits, push.k_chunk = splits > 1 ? k_chunk : push.k;
  push.sb_group = uint32_t(kernel.strides[0]), push.sb_k = uint32_t(kernel.strides[1]);
  push.sb_n = uint32_t(kernel.strides[2]);
  push.total = uint32_t(total);
  std::vector<AddressPatch> patches{{offsetof(ConvPush, in_addr), input.ref},
                                    {offsetof(ConvPush, b_addr), kernel.ref},
                                    {offsetof(ConvPush, c_addr), out}};
  BufferRef part = out;
  if (splits > 1) {
    part = partial_sums(impl, builder, splits, total, acc);
    patches.push_back({offsetof(ConvPush, part_addr), part});
  }
  std::array<uint32_t, 3> grid =
      gemm_grid(core, tile, uint64_t(g.group_filters), uint64_t(g.m()), uint64_t(g.groups) * splits);
  Launch& l = builder.launch(k, grid, push, std::move(patches));
  std::vector<AddressPatch> epi_patches;
  if (epi)
    for (AddressPatch patch : epi->patches) {
      patch.offset += uint32_t(offsetof(ConvParams, epi));
      epi_patches.push_back(patch);
    }
  builder.params(l, ConvParams{}, offsetof(ConvPush, params_addr), std::move(epi_patches));
  l.params = conv_params(plan, input, out_strides, epi);  // ConvParams and the table after it
  use_epilogue_tensors(builder, l, epi);
  builder.use(l, input.ref.slot, Access::Read);
  builder.use(l, kernel.ref.slot, Access::Read);
  builder.use(l, part.slot, Access::Write);
  if (splits > 1) append_split_sum(impl, builder, out_type, part, out, total, splits, epi);
}

uint32_t conv_gather16_vector(const ConvGeometry& g, const ConvInput& input) {
  size_t bytes = dtype_size(input.type);
  if (bytes == 0 || 16 % bytes != 0 || g.groups != 1 || tuning().conv.gather_scalar) return 0;
  int64_t v = int64_t(16 / bytes);
  bool strides_ok = input.strides[1] == 1 && std::all_of(input.strides.begin(), input.strides.end(),
                                                         [&](int64_t s) { return s == 1 || s % v == 0; });
  if (!strides_ok || g.ci % v != 0 || input.ref.byte_offset % 16 != 0) return 0;
  return uint32_t(v);
}

namespace {

void append_conv_im2col16(DeviceImpl& impl, LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input,
                          BufferRef a_out, uint32_t v) {
  const DeviceCore& core = *impl.core;
  const ConvGeometry& g = plan.geometry;
  bool idil = std::any_of(plan.attrs.input_dilation.begin(), plan.attrs.input_dilation.end(),
                          [](int64_t x) { return x > 1; });
  constexpr uint32_t wg = 256;
  uint64_t vectors = uint64_t(g.k()) / v;
  uint32_t lanes = 1;
  while (lanes < 32 && lanes < vectors) lanes *= 2;
  VariantKey variant{.family = uint16_t(FamilyId::conv), .op = 2};
  variant.types = {input.type};
  variant.type_count = 1;
  variant.layout = uint8_t(idil ? 8 : 0);
  variant.switches = uint32_t(g.spatial) | (v << 8) | (lanes << 16);
  const Kernel& k = impl.kernels.get(variant, [&] {
    KernelKey key;
    key.name = "conv_im2col16";
    key.workgroup_size = wg;
    auto& d = key.defines;
    d.emplace_back("V", std::to_string(v) + "u");
    d.emplace_back("NR", std::to_string(g.spatial));
    d.emplace_back("IDIL", idil ? "1" : "0");
    d.emplace_back("WG", std::to_string(wg) + "u");
    d.emplace_back("LANES", std::to_string(lanes) + "u");
    return key;
  });
  ConvPush push{};
  push.m = uint32_t(g.m()), push.n = 1, push.k = uint32_t(g.k());
  push.groups = 1, push.splits = 1, push.k_chunk = push.k;
  push.total = uint32_t(uint64_t(g.m()) * uint64_t(g.k()));
  uint64_t blocks = (uint64_t(g.m()) + wg / lanes - 1) / (wg / lanes);
  std::array<uint32_t, 3> grid{uint32_t(std::min<uint64_t>(blocks, core.info().max_workgroup_count[0])), 1, 1};
  Launch& l = builder.launch(k, grid, push,
                             {{offsetof(ConvPush, in_addr), input.ref}, {offsetof(ConvPush, c_addr), a_out}});
  builder.params(l, ConvParams{}, offsetof(ConvPush, params_addr), {});
  std::vector<int64_t> unused(g.spatial + 2, 0);  // output strides: A goes to C by its own indexing
  l.params = conv_params(plan, input, unused, nullptr);
  builder.use(l, input.ref.slot, Access::Read);
  builder.use(l, a_out.slot, Access::Write);
}

}  // namespace

void append_conv_im2col(DeviceImpl& impl, LaunchBuilder& builder, const ConvPlan& plan, const ConvInput& input,
                        BufferRef a_out) {
  const DeviceCore& core = *impl.core;
  const ConvGeometry& g = plan.geometry;
  if (uint32_t v = conv_gather16_vector(g, input)) return append_conv_im2col16(impl, builder, plan, input, a_out, v);
  AccType acc = dot_acc_type(input.type);
  // 256 invocations, 8 (complex: 4) A elements each; the tile core's shared arrays stay small.
  GemmTile tile = acc_bytes(acc) >= 16 ? GemmTile{64, 16, 16, 2, 2} : GemmTile{128, 16, 16, 4, 2};
  bool idil = std::any_of(plan.attrs.input_dilation.begin(), plan.attrs.input_dilation.end(),
                          [](int64_t x) { return x > 1; });
  GemmTileOpts o;
  o.a_k_unit = input.strides[1] == 1 && g.ci > 1;  // rows of A written along k where channels are adjacent
  bool kalign = g.ci % tile.bk == 0;
  VariantKey variant{.family = uint16_t(FamilyId::conv), .op = 1};
  variant.types = {input.type, input.type};
  variant.type_count = 2;
  variant.layout = uint8_t((o.a_k_unit ? 1 : 0) | (idil ? 8 : 0) | (kalign ? 16 : 0));
  variant.tile = pack_gemm_tile(tile);
  variant.switches = uint32_t(g.spatial);
  const Kernel& k = impl.kernels.get(variant, [&] {
    KernelKey key;
    key.name = "conv_gemm";
    key.workgroup_size = tile.invocations();
    auto& d = key.defines;
    add_gemm_common_defines(d, input.type, input.type, input.type, acc);
    add_gemm_tile_defines(d, tile, acc, o, input.type, input.type);
    add_gemm_operand_defines(d, input.type, input.type, acc);
    d.emplace_back("NR", std::to_string(g.spatial));
    d.emplace_back("IDIL", idil ? "1" : "0");
    d.emplace_back("KALIGN", kalign ? "1" : "0");
    d.emplace_back("IM2COL", "1");
    append_glsl_use_defines(d);
    return key;
  });
  ConvPush push{};
  push.m = uint32_t(g.m()), push.n = 1, push.k = uint32_t(g.k());
  push.groups = uint32_t(g.groups);
  push.splits = 1, push.k_chunk = push.k;
  push.total = uint32_t(uint64_t(g.groups) * uint64_t(g.m()) * uint64_t(g.k()));
  const auto& limits = core.info().max_workgroup_count;
  std::array<uint32_t, 3> grid{uint32_t(std::min<uint64_t>((uint64_t(g.k()) + tile.bk - 1) / tile.bk, limits[0])),
                               uint32_t(std::min<uint64_t>((uint64_t(g.m()) + tile.bm - 1) / tile.bm, limits[1])),
                               uint32_t(std::min<uint64_t>(uint64_t(g.groups), limits[2]))};
  Launch& l = builder.launch(k, grid, push,
                             {{offsetof(ConvPush, in_addr), input.ref}, {offsetof(ConvPush, c_addr), a_out}});
  builder.params(l, ConvParams{}, offsetof(ConvPush, params_addr), {});
  // The output strides in the block are unused here (A goes to C by its own indexing).
  std::vector<int64_t> unused(g.spatial + 2, 0);
  l.params = conv_params(plan, input, unused, nullptr);
  builder.use(l, input.ref.slot, Access::Read);
  builder.use(l, a_out.slot, Access::Write);
}

}  // namespace nxv
