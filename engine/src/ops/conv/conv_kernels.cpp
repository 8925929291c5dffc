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

// CPU drivers' tile for products large enough (append_conv_gemm).
constexpr GemmTile kCpuConvTile{32, 64, 16, 4, 4};
// The IM2COL mode's tiles: 256 invocations, 8 (complex: 4) A elements each; the tile core's
// shared arrays stay small.
constexpr GemmTile kIm2colTile{128, 16, 16, 4, 2}, kIm2colWideTile{64, 16, 16, 2, 2};

// GPUs, the 8x8 register tile: subgroups as blocks of 4 x 8 invocations, as dot's; where the A
// tile is read along m, 64-row tiles with subgroups of 16 x 2 (bench/RESULTS.md; not where
// tuning's dot.tile is `forced`). Returns the warp_x fallback, 0 for none.
uint32_t conv_gpu_tile(GemmTile& tile, bool a_k_unit, bool forced) {
  if (tile.tm != 8 || tile.tn != 8) return 0;
  if (!forced && !a_k_unit && tile.bm == 128 && tile.bn == 128) {
    tile.bm = 64;
    return 16;
  }
  return 4;
}

// A variant of conv_gemm.comp: the types, the tile core's tile and options, the conv's spatial
// axes, input dilation, and whether BK divides the channels; with `im2col`, the kernel writes
// A (the input's patches) out as a matrix instead of multiplying (out, in and kernel then all
// the input's type).
struct ConvGemmVariant {
  static constexpr const char* kTemplate = "conv_gemm";
  DType out = DType::F32, in = DType::F32, kernel = DType::F32;
  GemmTile tile{};
  GemmTileOpts opts{};
  uint32_t spatial = 2;
  bool idil = false, kalign = false, im2col = false;

  auto fields() const { return std::tie(out, in, kernel, tile, opts, spatial, idil, kalign, im2col); }

  KernelKey source() const {
    KernelKey key = gemm_tile_kernel_key(kTemplate, out, in, kernel, tile, opts);
    auto& d = key.defines;
    d.emplace_back("NR", std::to_string(spatial));
    d.emplace_back("IDIL", idil ? "1" : "0");
    d.emplace_back("KALIGN", kalign ? "1" : "0");
    if (im2col) d.emplace_back("IM2COL", "1");
    append_glsl_use_defines(d);
    return key;
  }

  // Every type, 2D convs: each tile the lowering picks by size (GPUs, CPU drivers), input
  // channels adjacent or apart, the vector loads GPUs take where the type has them (four
  // channels of the input where adjacent, four filters of the kernel); floats also with BK not
  // dividing the channels (an image's first layer); f32 also in 1D and 3D, with input
  // dilation, and with the kernel's filters apart. The IM2COL mode likewise.
  static std::vector<ConvGemmVariant> declared(const DeviceInfo& info) {
    std::vector<ConvGemmVariant> all;
    for (DType t : kAllDTypes) {
      AccType acc = dot_acc_type(t);
      bool f32 = t == DType::F32;
      std::vector<std::pair<GemmTile, bool>> tiles;  // and whether on GPU paths
      for (const GemmTile& tile : gemm_gpu_tiles(info, acc)) tiles.push_back({tile, true});
      if (acc_bytes(acc) <= 8) tiles.push_back({kCpuConvTile, false});
      tiles.push_back({gemm_cpu_tile(info, acc), false});
      for (auto [chosen, gpu] : tiles)
        for (bool a_k_unit : {true, false}) {
          ConvGemmVariant v{.out = t, .in = t, .kernel = t, .tile = chosen};
          uint32_t warp_x = gpu ? conv_gpu_tile(v.tile, a_k_unit, false) : 0;
          v.opts.a_k_unit = a_k_unit, v.opts.b_n_unit = true;
          v.opts.vec4_shared = gemm_vec4_shared(v.tile, acc, false);
          v.opts.warp_x = gpu && v.opts.vec4_shared ? gemm_warp_x_fits(v.tile, warp_x) : 0;
          auto add = [&](auto change) {
            ConvGemmVariant w = v;
            change(w);
            all.push_back(w);
          };
          auto vectors = [&](ConvGemmVariant& w) {
            w.opts.a_vec4 = a_k_unit && w.tile.bk % 4 == 0;
            w.opts.b_vec4 = w.tile.bn % 4 == 0;
          };
          bool vec4 = gpu && gemm_vec4_loadable(t);
          for (uint32_t spatial : f32 ? std::vector<uint32_t>{2, 1, 3} : std::vector<uint32_t>{2}) {
            add([&](ConvGemmVariant& w) { w.spatial = spatial, w.kalign = true; });
            if (vec4) add([&](ConvGemmVariant& w) { w.spatial = spatial, w.kalign = true, vectors(w); });
          }
          if (is_float(t)) add([&](ConvGemmVariant& w) { w.kalign = false; });
          if (!f32) continue;
          add([&](ConvGemmVariant& w) { w.kalign = true, w.idil = true; });
          add([&](ConvGemmVariant& w) { w.kalign = true, w.opts.b_n_unit = false; });
        }
      for (bool a_k_unit : {true, false})
        for (bool kalign : {true, false}) {
          if (!kalign && !is_float(t)) continue;
          ConvGemmVariant v{.out = t, .in = t, .kernel = t, .tile = im2col_tile(acc), .kalign = kalign, .im2col = true};
          v.opts.a_k_unit = a_k_unit;
          all.push_back(v);
        }
    }
    return all;
  }

  static GemmTile im2col_tile(AccType acc) { return acc_bytes(acc) >= 16 ? kIm2colWideTile : kIm2colTile; }
};

// A variant of conv_im2col16.comp: V elements per 16-byte vector, the conv's spatial axes,
// input dilation, LANES invocations per row of A.
struct ConvIm2col16Variant {
  static constexpr const char* kTemplate = "conv_im2col16";
  static constexpr uint32_t kWorkgroupSize = 256;
  uint32_t v = 8, spatial = 2;
  bool idil = false;
  uint32_t lanes = 32;

  auto fields() const { return std::tie(v, spatial, idil, lanes); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    auto& d = key.defines;
    d.emplace_back("V", std::to_string(v) + "u");
    d.emplace_back("NR", std::to_string(spatial));
    d.emplace_back("IDIL", idil ? "1" : "0");
    d.emplace_back("WG", std::to_string(kWorkgroupSize) + "u");
    d.emplace_back("LANES", std::to_string(lanes) + "u");
    return key;
  }

  // Each element size's vector, 2D convs in every lane count (short rows take fewer), 1D and
  // 3D ones and input dilation with rows of 32 lanes or more.
  static std::vector<ConvIm2col16Variant> declared(const DeviceInfo&) {
    std::vector<ConvIm2col16Variant> all;
    for (uint32_t v : {16u, 8u, 4u, 2u, 1u}) {
      for (uint32_t lanes : {32u, 16u, 8u, 4u, 2u, 1u}) all.push_back({v, 2, false, lanes});
      for (uint32_t spatial : {1u, 2u, 3u})
        for (bool idil : {false, true})
          if (spatial != 2 || idil) all.push_back({v, spatial, idil, 32});
    }
    return all;
  }
};

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
    tile = kCpuConvTile;
  // The A tile along k where the input's channels are adjacent (channels last), else along m.
  bool a_k_unit = input.strides[1] == 1 && g.ci > 1;
  uint32_t warp_x = gemm_cpu_paths(core) ? 0 : conv_gpu_tile(tile, a_k_unit, forced);
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
  ConvGemmVariant variant{.out = out_type, .in = input.type, .kernel = kernel.type, .tile = tile, .opts = o,
                          .spatial = uint32_t(g.spatial), .idil = idil, .kalign = kalign};
  const Kernel& k = *epilogue_kernel(impl.kernels, variant, epi);
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
  constexpr uint32_t wg = ConvIm2col16Variant::kWorkgroupSize;
  uint64_t vectors = uint64_t(g.k()) / v;
  uint32_t lanes = 1;
  while (lanes < 32 && lanes < vectors) lanes *= 2;
  const Kernel& k = impl.kernels.get(ConvIm2col16Variant{v, uint32_t(g.spatial), idil, lanes});
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
  GemmTile tile = ConvGemmVariant::im2col_tile(dot_acc_type(input.type));
  bool idil = std::any_of(plan.attrs.input_dilation.begin(), plan.attrs.input_dilation.end(),
                          [](int64_t x) { return x > 1; });
  GemmTileOpts o;
  o.a_k_unit = input.strides[1] == 1 && g.ci > 1;  // rows of A written along k where channels are adjacent
  bool kalign = g.ci % tile.bk == 0;
  const Kernel& k = impl.kernels.get(ConvGemmVariant{.out = input.type, .in = input.type, .kernel = input.type,
                                                     .tile = tile, .opts = o, .spatial = uint32_t(g.spatial),
                                                     .idil = idil, .kalign = kalign, .im2col = true});
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

void declare_conv_kernel_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<ConvGemmVariant>(out, info);
  declare_variants<ConvIm2col16Variant>(out, info);
}

}  // namespace nxv
