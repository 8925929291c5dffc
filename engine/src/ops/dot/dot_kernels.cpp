#include "ops/dot/dot_kernels.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <tuple>

#include "common/tuning.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "exec/linear_plan.hpp"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/dot_cpu.hpp"
#include "ops/dot/dot_epilogue.hpp"
#include "ops/dot/dot_prologue.hpp"
#include "ops/dot/dot_rows.hpp"
#include "ops/dot/gemm_push.h"
#include "ops/reduce/folds.hpp"

namespace nxv {

std::string dot_mac(AccType acc) {
  if (is_floating(acc)) return "fma(a, b, acc)";
  if (is_complex(acc)) return "((acc) + " + glsl_name(acc) + "((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))";
  return "((acc) + (a) * (b))";
}

KernelKey gemm_tile_kernel_key(const char* name, DType out, DType a, DType b, const GemmTile& tile,
                               const GemmTileOpts& opts) {
  AccType acc = dot_acc_type(out);
  KernelKey key;
  key.name = name;
  key.workgroup_size = tile.invocations() * opts.slices;
  add_gemm_common_defines(key.defines, out, a, b, acc);
  add_gemm_tile_defines(key.defines, tile, acc, opts, a, b);
  add_gemm_operand_defines(key.defines, a, b, acc);
  return key;
}

void add_gemm_common_defines(Defines& d, DType out, DType x, DType y, AccType acc) {
  fold_features({out, x, y}, acc).add_defines(d);
  d.emplace_back("ACC", glsl_name(acc));
  d.emplace_back("ZERO", glsl_name(acc) + "(0)");
  d.emplace_back("MAC(acc, a, b)", dot_mac(acc));
  add_buffer_defines(d, "C", out);
  add_buffer_defines(d, "OUT", out);
  d.emplace_back("STORE_OUT(v)", glsl_store(out));
}

namespace {

uint32_t shared_bytes(const GemmTile& t, uint32_t acc_bytes) {
  return t.bk * (t.bm + t.bn + 8) * acc_bytes;
}

uint32_t shared_limit(const DeviceInfo& info) { return info.max_shared_memory ? info.max_shared_memory : 16384; }

GemmTile fit_shared(GemmTile t, uint32_t acc_bytes, uint32_t limit) {
  while (t.bk > 1 && shared_bytes(t, acc_bytes) > limit) t.bk /= 2;
  return t;
}

// choose_gemm_tile's tiles: GPUs by size, CPU drivers.
constexpr GemmTile kTile128{128, 128, 16, 8, 8}, kTile64{64, 64, 16, 4, 4}, kTile32x64{32, 64, 16, 4, 4},
    kTile32{32, 32, 16, 2, 2}, kCpuTile{8, 32, 8, 8, 1};

std::optional<GemmTile> tuned_tile() {
  const auto& forced = tuning().dot.tile;
  if (!forced) return std::nullopt;
  GemmTile t{(*forced)[0], (*forced)[1], (*forced)[2], (*forced)[3], (*forced)[4]};
  if (!t.tm || !t.tn || !t.bk ||
      t.bm % t.tm || t.bn % t.tn || t.tm > 16 || t.tn > 16 || t.bm > 1024 || t.bn > 1024 || t.bk > 16 ||
      t.invocations() > 1024)
    return std::nullopt;
  return t;
}

uint64_t tiles(const GemmShape& s, uint32_t bm, uint32_t bn) {
  return uint64_t(s.batch) * uint64_t((s.m + bm - 1) / bm) * uint64_t((s.n + bn - 1) / bn);
}

bool vec4_loadable(DType type) {
  return !glsl_vec4_type(type).empty() && type != DType::F8 && type != DType::F8E4M3FN;
}

}  // namespace

std::string gemm_acc4_type(AccType acc) {
  switch (acc) {
    case AccType::F32: return "vec4";
    case AccType::F64: return "dvec4";
    case AccType::S32: return "ivec4";
    case AccType::U32: return "uvec4";
    case AccType::S64: return "i64vec4";
    case AccType::U64: return "u64vec4";
    default: return "";
  }
}

std::string gemm_load4(DType type, const std::string& acc4) {
  if (type == DType::BF16)
    return acc4 + "(nxv_bf16_load(q.x), nxv_bf16_load(q.y), nxv_bf16_load(q.z), nxv_bf16_load(q.w))";
  return acc4 + "(q)";
}

bool gemm_cpu_paths(const DeviceCore& core) { return cpu_paths(core.profile()); }

std::vector<GemmTile> gemm_gpu_tiles(const DeviceInfo& info, AccType acc) {
  uint32_t bytes = acc_bytes(acc), limit = shared_limit(info);
  std::vector<GemmTile> all;
  if (bytes == 4) all.push_back(fit_shared(kTile128, bytes, limit));
  for (const GemmTile& t : {kTile64, kTile32x64, kTile32}) all.push_back(fit_shared(t, bytes, limit));
  return all;
}

GemmTile gemm_cpu_tile(const DeviceInfo& info, AccType acc) {
  return fit_shared(kCpuTile, acc_bytes(acc), shared_limit(info));
}

bool gemm_vec4_shared(const GemmTile& tile, AccType acc, bool tuned) {
  return acc_bytes(acc) == 4 && !gemm_acc4_type(acc).empty() && tile.tm % 4 == 0 && tile.tn % 4 == 0 &&
         !(tuned && tuning().dot.no_vec4);
}

uint32_t gemm_warp_x_fits(const GemmTile& tile, uint32_t wx) {
  uint32_t rx = tile.bn / tile.tn, ry = tile.bm / tile.tm;
  if (wx == 0 || wx > 32 || 32 % wx || tile.invocations() % 32 || rx % wx || ry % (32 / wx)) return 0;
  return wx;
}

uint32_t gemm_warp_x(const DeviceCore& core, const GemmTile& tile, uint32_t fallback) {
  uint32_t wx = fallback;
  if (auto forced = tuning().dot.warp_x) wx = *forced;
  else if (gemm_cpu_paths(core)) return 0;
  return gemm_warp_x_fits(tile, wx);
}

bool gemm_one_tile(const DeviceCore& core, const GemmShape& shape, const GemmTile& tile) {
  if (!tuning().dot.one_tile || tuning().dot.splits) return false;
  const auto& max_count = core.info().max_workgroup_count;
  // split_k gives at most 16 splits.
  return uint64_t((shape.n + tile.bn - 1) / tile.bn) <= max_count[0] &&
         uint64_t((shape.m + tile.bm - 1) / tile.bm) <= max_count[1] && uint64_t(shape.batch) * 16 <= max_count[2];
}

bool gemm_tiles_inside(const DeviceCore& core, const GemmShape& shape, const GemmTile& tile, const GemmTileOpts& o,
                       AccType acc) {
  // 32-bit accumulators: f64's tiles ran slower without the checks on an H100.
  if (gemm_cpu_paths(core) || acc_bytes(acc) != 4 || tuning().dot.no_inside) return false;
  return shape.m > 0 && shape.n > 0 && shape.k > 0 && shape.m % tile.bm == 0 && shape.n % tile.bn == 0 &&
         shape.k % tile.bk == 0 && gemm_loads_even(tile, o);
}

bool gemm_loads_even(const GemmTile& tile, const GemmTileOpts& o) {
  uint64_t wg = tile.invocations();
  uint64_t a_items = uint64_t(tile.bm) * tile.bk / (o.a_vec4 ? 4 : 1);
  uint64_t b_items = uint64_t(tile.bn) * tile.bk / (o.b_vec4 ? 4 : 1);
  return a_items % wg == 0 && b_items % wg == 0;
}

bool gemm_vec4_loadable(DType type) { return vec4_loadable(type); }

bool gemm_operand_vec4(const DeviceCore& core, DType type, const std::array<int64_t, 3>& strides,
                       uint64_t byte_offset, int unit_axis, int64_t extent, uint32_t tile_extent) {
  if (gemm_cpu_paths(core) || !vec4_loadable(type) || tuning().dot.gvec4 == Toggle::Off) return false;
  int other = unit_axis == 1 ? 2 : 1;
  uint64_t offset = byte_offset / dtype_size(type);
  return strides[size_t(unit_axis)] == 1 && extent % 4 == 0 && tile_extent % 4 == 0 && strides[size_t(other)] % 4 == 0 &&
         strides[0] % 4 == 0 && offset % 4 == 0 && byte_offset % dtype_size(type) == 0;
}

std::array<uint32_t, 3> gemm_grid(const DeviceCore& core, const GemmTile& tile, uint64_t n, uint64_t m, uint64_t z) {
  const auto& max_count = core.info().max_workgroup_count;
  return {uint32_t(std::min<uint64_t>((n + tile.bn - 1) / tile.bn, max_count[0])),
          uint32_t(std::min<uint64_t>((m + tile.bm - 1) / tile.bm, max_count[1])),
          uint32_t(std::min<uint64_t>(z, max_count[2]))};
}

void add_gemm_operand_defines(Defines& d, DType a, DType b, AccType acc) {
  add_buffer_defines(d, "A", a);
  add_buffer_defines(d, "B", b);
  d.emplace_back("LOAD_A(x)", glsl_load(a, acc));
  d.emplace_back("LOAD_B(x)", glsl_load(b, acc));
}

void add_gemm_tile_defines(Defines& d, const GemmTile& tile, AccType acc, const GemmTileOpts& o,
                           DType a, DType b) {
  d.emplace_back("BM", std::to_string(tile.bm) + "u");
  d.emplace_back("BN", std::to_string(tile.bn) + "u");
  d.emplace_back("BK", std::to_string(tile.bk) + "u");
  d.emplace_back("TM", std::to_string(tile.tm) + "u");
  d.emplace_back("TN", std::to_string(tile.tn) + "u");
  d.emplace_back("A_K_UNIT", o.a_k_unit ? "1" : "0");
  d.emplace_back("B_N_UNIT", o.b_n_unit ? "1" : "0");
  d.emplace_back("VEC4_SHARED", o.vec4_shared ? "1" : "0");
  d.emplace_back("WARP_X", std::to_string(o.warp_x));
  d.emplace_back("ONE_TILE", o.one_tile ? "1" : "0");
  d.emplace_back("TILES_INSIDE", o.inside ? "1" : "0");
  if (o.slices > 1) d.emplace_back("SLICES", std::to_string(o.slices));
  d.emplace_back("A_VEC4", o.a_vec4 ? "1" : "0");
  d.emplace_back("B_VEC4", o.b_vec4 ? "1" : "0");
  std::string acc4 = gemm_acc4_type(acc);
  if (o.vec4_shared || o.a_vec4 || o.b_vec4) d.emplace_back("ACC4", acc4);
  if (o.a_vec4) {
    d.emplace_back("A_VEC", glsl_vec4_type(a));
    d.emplace_back("A_VALIGN", std::to_string(vec4_alignment(a)));
    d.emplace_back("LOAD_A4(q)", gemm_load4(a, acc4));
  }
  if (o.b_vec4) {
    d.emplace_back("B_VEC", glsl_vec4_type(b));
    d.emplace_back("B_VALIGN", std::to_string(vec4_alignment(b)));
    d.emplace_back("LOAD_B4(q)", gemm_load4(b, acc4));
  }
}

std::pair<uint32_t, uint32_t> split_k(const DeviceCore& core, uint64_t workgroups, uint64_t k, uint64_t outputs,
                                      uint64_t target, uint64_t most, uint64_t align) {
  uint64_t splits = 1;
  workgroups = std::max<uint64_t>(workgroups, 1);
  if (!gemm_cpu_paths(core) && workgroups < target && k >= 512)
    splits = std::min<uint64_t>({(target + workgroups - 1) / workgroups, k / 256, most});
  if (auto forced = tuning().dot.splits) splits = std::clamp<uint64_t>(*forced, 1, std::max<uint64_t>(k, 1));
  splits = std::clamp<uint64_t>(splits, 1, std::max<uint64_t>(core.info().max_workgroup_count[2] / 2, 1));
  // The partial sums are indexed in 32 bits.
  splits = std::min<uint64_t>(splits, std::max<uint64_t>(((uint64_t(1) << 31) - 1) / std::max<uint64_t>(outputs, 1), 1));
  uint64_t chunk = std::max<uint64_t>((k + splits - 1) / splits, 1);
  chunk = (chunk + align - 1) / align * align;
  splits = std::max<uint64_t>((k + chunk - 1) / chunk, 1);
  return {uint32_t(splits), uint32_t(chunk)};
}

bool matvec_per_column(const DeviceCore& core, const GemmShape& shape) {
  return !gemm_cpu_paths(core) && !tuning().dot.no_columns && shape.batch == 1 && shape.n >= 2 && shape.n <= 16 && shape.m >= 64 &&
         shape.k >= 64;
}

bool matvec_per_row(const DeviceCore& core, const GemmShape& shape) {
  return matvec_per_column(core, GemmShape{shape.batch, shape.n, shape.m, shape.k});
}

bool sums_in_order(const DeviceCore& core, DType out, const GemmShape& shape, DType a, DType b) {
  if (shape.m < 2 || shape.n < 2 || tuning().dot.splits || tuning().dot.slices.value_or(1) > 1 ||
      tuning().dot.bf16x3)
    return false;
  if (gemm_cpu_paths(core)) return true;
  // Rows one by one and the swapped product's columns one by one are the same matrix-vector
  // products (dot.cpp), whatever the output's strides.
  if (matvec_per_row(core, shape) || matvec_per_column(core, shape)) return true;
  bool narrow = dtype_size(a) < 4 || dtype_size(b) < 4;  // the cooperative-matrix tiers' inputs
  return !narrow && !is_complex(out) && shape.k < 512;  // split-K needs k >= 512 (split_k)
}

BufferRef partial_sums(DeviceImpl& impl, LaunchBuilder& builder, uint64_t splits, uint64_t n, AccType acc) {
  auto partials = impl.allocate(std::max<uint64_t>(splits * n * acc_bytes(acc), 16));
  return {builder.bind(partials), 0};
}

AccType dot_acc_type(DType out) { return acc_of(out); }

namespace {

// The partial sums' type where it is not the output's accumulator: the 8-bit tensor cores'
// 32-bit integers (and f32 for 16-bit float inputs, which dot_acc_type gives anyway).
std::optional<DType> partials_type(AccType acc, DType out) {
  if (acc == dot_acc_type(out)) return std::nullopt;
  switch (acc) {
    case AccType::S32: return DType::S32;
    case AccType::U32: return DType::U32;
    case AccType::F32: return DType::F32;
    default:
      throw Error(ErrorKind::Unsupported, "dot: split-K partial sums of type " + glsl_name(acc) + " into " +
                                              std::string(dtype_name(out)));
  }
}

}  // namespace

GemmTile choose_gemm_tile(const DeviceCore& core, const GemmShape& shape, AccType acc) {
  std::optional<GemmTile> forced = tuned_tile();
  const uint32_t bytes = acc_bytes(acc);
  GemmTile t;
  if (forced) {
    t = *forced;
  } else if (gemm_cpu_paths(core)) {
    // CPU drivers take gemm_rows.comp or gemm_cpu.comp; this serves them only with
    // dot.no_cpu_gemm (N not a multiple of 4, complex, strided B). One row block per workgroup (RY = 1) puts every A
    // read at the same address in all lanes; small unrolled loops keep its compile short.
    t = kCpuTile;
  } else {
    // GPUs: the largest tile that still gives about a workgroup per multiprocessor of a large
    // GPU (~128): 128x128 with 8x8 per invocation (32-bit accumulators), 64x64 (4x4; also
    // from 32 tiles where k is long: split-K makes up the rest), 32x64 (4x4, 128
    // invocations), else 32x32 (2x2) for small products.
    if (bytes == 4 && tiles(shape, 128, 128) >= 128) t = kTile128;
    else if (tiles(shape, 64, 64) >= 128 || (tiles(shape, 64, 64) >= 32 && shape.k >= 512)) t = kTile64;
    else if (tiles(shape, 32, 64) >= 64) t = kTile32x64;
    else t = kTile32;
  }
  return fit_shared_memory(core, t, bytes);
}

GemmTile fit_shared_memory(const DeviceCore& core, GemmTile t, uint32_t acc_bytes) {
  return fit_shared(t, acc_bytes, shared_limit(core.info()));
}

void launch_gemm_once(LaunchBuilder& builder, const Kernel& kernel, const std::array<uint32_t, 3>& grid,
                      const GemmPush& push, const GemmOperand& a, const GemmOperand& b, BufferRef c,
                      const DotEpilogue* epi) {
  Launch& l = builder.launch(kernel, grid, push,
                             {{offsetof(GemmPush, a_addr), a.ref}, {offsetof(GemmPush, b_addr), b.ref},
                              {offsetof(GemmPush, c_addr), c}});
  builder.use(l, a.ref.slot, Access::Read);
  builder.use(l, b.ref.slot, Access::Read);
  builder.use(l, c.slot, Access::Write);
  attach_epilogue(builder, l, epi, offsetof(GemmPush, epi_addr));
}

namespace {

// The push constants of a GEMM-shaped kernel without split-K (splits 1, k_chunk k).
GemmPush gemm_push(const GemmShape& shape, const GemmOperand& a, const GemmOperand& b) {
  GemmPush push{};
  push.batch = uint32_t(shape.batch), push.m = uint32_t(shape.m), push.n = uint32_t(shape.n), push.k = uint32_t(shape.k);
  push.sa_batch = uint32_t(a.strides[0]), push.sa_m = uint32_t(a.strides[1]), push.sa_k = uint32_t(a.strides[2]);
  push.sb_batch = uint32_t(b.strides[0]), push.sb_k = uint32_t(b.strides[1]), push.sb_n = uint32_t(b.strides[2]);
  push.splits = 1, push.k_chunk = push.k;
  return push;
}

// dot's own choices on GPUs (untuned) from choose_gemm_tile's `tile` and the warp_x fallback:
// - 128x128 of 32-bit accumulators: 16 x 8 per invocation (128 of them) and k steps of 8, in
//   subgroups of 8 x 4 invocations; faster than conv's 8 x 8 here (bench/RESULTS.md);
// - f64 (64-bit accumulators, read from shared memory one by one): 64x128 tiles of 8 x 8 per
//   invocation where they fill the device (`wide`), faster than 64x64 of 4 x 4.
void dot_gpu_tile(GemmTile& tile, uint32_t& warp_fallback, AccType acc, uint32_t shared_limit, bool wide) {
  if (tile.bm == 128 && tile.bn == 128 && tile.bk == 16 && tile.tm == 8 && tile.tn == 8)
    tile = {128, 128, 8, 16, 8}, warp_fallback = 8;
  if (acc == AccType::F64 && tile.bm == 64 && tile.bn == 64 && wide) tile = fit_shared({64, 128, 16, 8, 8}, 8, shared_limit);
}

// Slices of the GPUs' choice: four groups of 128 invocations over a 32x64 tile.
constexpr uint32_t kSlices = 4;

// Whether `tile` read as `o` takes `slices` slices: the workgroup's invocations, every slice's
// stage in shared memory, and the slices' sums staged in the B stages while they are added.
bool slices_fit(const DeviceInfo& info, const GemmTile& tile, const GemmTileOpts& o, uint32_t slices, AccType acc) {
  uint32_t pad = o.vec4_shared ? 4 : 1;
  uint64_t pa = o.a_k_unit ? tile.bm + pad : tile.bm, pb = o.b_n_unit ? tile.bn : tile.bn + pad;
  uint64_t stage_a = tile.bk * pa, stage_b = tile.bk * pb;
  return slices > 1 && uint64_t(tile.invocations()) * slices <= info.max_workgroup_invocations &&
         (stage_a + stage_b) * slices * acc_bytes(acc) <= shared_limit(info) && uint64_t(tile.bm) * tile.bn <= slices * stage_b;
}

// How many of the `wanted` slices split each workgroup's k, and how long each is (a multiple of
// `align`): {1, k} where `tile` does not take them or k is not split this way.
std::pair<uint32_t, uint32_t> choose_slices(const DeviceCore& core, const GemmShape& shape, const GemmTile& tile,
                                            const GemmTileOpts& o, AccType acc, uint32_t wanted, uint32_t align) {
  uint64_t k = uint64_t(shape.k);
  if (wanted < 2 || k < 2 || !slices_fit(core.info(), tile, o, wanted, acc) || is_complex(acc) || acc_bytes(acc) != 4)
    return {1, uint32_t(k)};
  uint64_t chunk = (k + wanted - 1) / wanted;
  chunk = (chunk + align - 1) / align * align;
  uint64_t slices = (k + chunk - 1) / chunk;
  if (slices < 2) return {1, uint32_t(k)};
  return {uint32_t(slices), uint32_t(chunk)};
}

// A variant of gemm.comp: the types, the tile and how the tile core reads and stages its operands.
struct GemmVariant {
  static constexpr const char* kTemplate = "gemm";
  DType out = DType::F32, a = DType::F32, b = DType::F32;
  GemmTile tile{};
  GemmTileOpts opts{};

  auto fields() const { return std::tie(out, a, b, tile, opts); }

  KernelKey source() const {
    KernelKey key = gemm_tile_kernel_key(kTemplate, out, a, b, tile, opts);
    append_glsl_use_defines(key.defines);
    return key;
  }

  // Every type, in each tile the lowering picks by size on GPUs (with dot's own choices) and
  // the CPU drivers' one, each way of reading A and B (along k or m, along n or k): with edge
  // checks and scalar loads, and, for 32-bit accumulators on GPUs, with every tile inside (as
  // far as the tile allows) and operands read four-wide where their type allows.
  static std::vector<GemmVariant> declared(const DeviceInfo& info) {
    std::vector<GemmVariant> all;
    uint32_t limit = shared_limit(info);
    for (DType t : kAllDTypes) {
      AccType acc = dot_acc_type(t);
      auto add = [&](const GemmTile& tile, uint32_t warp_fallback, bool gpu) {
        for (bool a_k_unit : {true, false})
          for (bool b_n_unit : {true, false}) {
            GemmTileOpts o;
            o.a_k_unit = a_k_unit, o.b_n_unit = b_n_unit;
            o.vec4_shared = gemm_vec4_shared(tile, acc, false);
            o.warp_x = gpu && o.vec4_shared ? gemm_warp_x_fits(tile, warp_fallback) : 0;
            all.push_back({t, t, t, tile, o});
            if (!gpu || acc_bytes(acc) != 4) continue;
            o.a_vec4 = vec4_loadable(t) && (a_k_unit ? tile.bk : tile.bm) % 4 == 0;
            o.b_vec4 = vec4_loadable(t) && (b_n_unit ? tile.bn : tile.bk) % 4 == 0;
            o.inside = gemm_loads_even(tile, o);
            if (o.a_vec4 || o.b_vec4 || o.inside) all.push_back({t, t, t, tile, o});
          }
      };
      for (GemmTile tile : gemm_gpu_tiles(info, acc)) {
        uint32_t warp_fallback = tile.tm == 8 && tile.tn == 8 ? 4 : 0;
        for (bool wide : {false, true}) {
          if (wide && !(acc == AccType::F64 && tile.bm == 64 && tile.bn == 64)) continue;
          GemmTile chosen = tile;
          uint32_t fallback = warp_fallback;
          dot_gpu_tile(chosen, fallback, acc, limit, wide);
          add(chosen, fallback, true);
        }
      }
      add(gemm_cpu_tile(info, acc), 0, false);
      // The sliced 32x64 tile (choose_slices), where the device takes it.
      if (acc_bytes(acc) == 4 && !is_complex(acc)) {
        size_t before = all.size();
        add(fit_shared(kTile32x64, acc_bytes(acc), limit), 0, true);
        for (size_t i = before; i < all.size();) {
          all[i].opts.slices = kSlices;
          if (slices_fit(info, all[i].tile, all[i].opts, kSlices, acc)) ++i;
          else all.erase(all.begin() + ptrdiff_t(i));
        }
      }
    }
    return all;
  }
};

}  // namespace

void append_gemm(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                 const GemmOperand& b, BufferRef c, const DotEpilogue* epi) {
  const DeviceCore& core = *impl.core;
  AccType acc = dot_acc_type(out);
  // CPU drivers: the row kernel where B's rows are read in aligned vectors of four, else the
  // register-block kernel (any strides and sizes).
  // Operand prologues run in this file's kernels only (the family's check sees to it).
  if ((a.prologue || b.prologue) && (gemm_cpu_paths(core) || rows_kernel_fits(core, shape, b, out)))
    throw Error(ErrorKind::Unsupported, "dot: an operand prologue reached a tier without prologues");
  if (rows_kernel_fits(core, shape, b, out)) return append_gemm_rows(impl, builder, out, shape, a, b, c, epi);
  if (auto cpu = cpu_gemm_tile(core, shape, out)) return append_gemm_cpu(impl, builder, out, shape, a, b, c, *cpu, epi);
  // The cooperative-matrix tier stores from matrix fragments and has no epilogue.
  if (auto coop = epi || a.prologue || b.prologue ? std::nullopt : coopmat_gemm_tile(core, shape, a, b, out))
    return append_gemm_coopmat(impl, builder, out, shape, a, b, c, *coop);
  GemmTile tile = choose_gemm_tile(core, shape, acc);
  uint32_t warp_fallback = tile.tm == 8 && tile.tn == 8 ? 4 : 0;
  if (!gemm_cpu_paths(core) && !tuned_tile())
    dot_gpu_tile(tile, warp_fallback, acc, shared_limit(core.info()), tiles(shape, 64, 128) >= 128);
  // Where the tile's workgroups are too few and split-K would make up the rest with a second
  // pass, the 32x64 tile in kSlices slices (k split inside each workgroup) where that tile
  // alone gives about half a workgroup per multiprocessor; dot.slices forces n (1: none) with
  // any tile.
  uint32_t slices_wanted = tuning().dot.slices.value_or(1);
  if (!gemm_cpu_paths(core) && !tuned_tile() && !tuning().dot.slices && !tuning().dot.splits && acc_bytes(acc) == 4 &&
      !is_complex(acc) && split_k(core, tiles(shape, tile.bm, tile.bn), uint64_t(shape.k), 1, 256, 16).first > 1 &&
      tiles(shape, kTile32x64.bm, kTile32x64.bn) >= 64) {
    tile = fit_shared(kTile32x64, acc_bytes(acc), shared_limit(core.info())), warp_fallback = 0;
    slices_wanted = kSlices;
  }
  GemmTileOpts o;
  o.a_k_unit = a.strides[2] == 1, o.b_n_unit = b.strides[2] == 1;
  // Shared-memory reads four-wide where the register tile is in groups of four.
  o.vec4_shared = gemm_vec4_shared(tile, acc);
  // Vector loads along each operand's unit axis where strides, offset and extents allow, where
  // every tile lies wholly inside (with edge checks they slowed dot down on an H100), or with
  // dot.gvec4=1; dot.gvec4=0 turns them off.
  bool gvec4 = tuning().dot.gvec4 == Toggle::On || gemm_tiles_inside(core, shape, tile, o, acc);
  o.a_vec4 = !gvec4 ? false : o.a_k_unit ? gemm_operand_vec4(core, a.type, a.strides, a.ref.byte_offset, 2, shape.k, tile.bk)
                        : gemm_operand_vec4(core, a.type, a.strides, a.ref.byte_offset, 1, shape.m, tile.bm);
  o.b_vec4 = !gvec4 ? false : o.b_n_unit ? gemm_operand_vec4(core, b.type, b.strides, b.ref.byte_offset, 2, shape.n, tile.bn)
                        : gemm_operand_vec4(core, b.type, b.strides, b.ref.byte_offset, 1, shape.k, tile.bk);
  // The 8x8 register tile in subgroups of 4 x 8 invocations (faster than row by row).
  o.warp_x = o.vec4_shared ? gemm_warp_x(core, tile, warp_fallback) : 0;
  o.one_tile = gemm_one_tile(core, shape, tile);
  o.inside = gemm_tiles_inside(core, shape, tile, o, acc);
  // Vectors along k never straddle a split; without edge checks, neither does a k step.
  bool k_vectors = (o.a_vec4 && o.a_k_unit) || (o.b_vec4 && !o.b_n_unit);
  uint32_t k_align = std::lcm(k_vectors ? 4u : 1u, o.inside ? tile.bk : 1u);
  auto [slices, k_chunk] = choose_slices(core, shape, tile, o, acc, slices_wanted, k_align);
  o.slices = slices;
  const Kernel& kernel = *dot_kernel(impl.kernels, GemmVariant{out, a.type, b.type, tile, o},
                                     dot_prologue_code(a, b, {"A", "B"}, core.has(kCapFloat64)), epi);
  if (slices > 1) {
    GemmPush push = gemm_push(shape, a, b);
    push.splits = 1, push.k_chunk = k_chunk;
    std::array<uint32_t, 3> grid = gemm_grid(core, tile, uint64_t(shape.n), uint64_t(shape.m), uint64_t(shape.batch));
    return launch_gemm_once(builder, kernel, grid, push, a, b, c, epi);
  }
  launch_gemm_kernel(impl, builder, kernel, out, shape, a, b, c, tile, acc, k_align, epi);
}

void launch_gemm_kernel(DeviceImpl& impl, LaunchBuilder& builder, const Kernel& kernel, DType out,
                        const GemmShape& shape, const GemmOperand& a, const GemmOperand& b, BufferRef c,
                        const GemmTile& tile, AccType acc, uint32_t k_align,
                        const DotEpilogue* epi, const std::function<void(Launch&)>& attach) {
  const DeviceCore& core = *impl.core;
  GemmPush push = gemm_push(shape, a, b);
  // Split-K where the tiles alone give fewer than about 256 workgroups and k is long.
  uint64_t n = uint64_t(shape.batch) * uint64_t(shape.m) * uint64_t(shape.n);
  auto [splits, k_chunk] = split_k(core, tiles(shape, tile.bm, tile.bn), uint64_t(shape.k), n, 256, 16, k_align);
  push.splits = splits, push.k_chunk = splits > 1 ? k_chunk : push.k;
  std::vector<AddressPatch> patches{{offsetof(GemmPush, a_addr), a.ref}, {offsetof(GemmPush, b_addr), b.ref},
                                    {offsetof(GemmPush, c_addr), c}};
  BufferRef part = c;
  if (splits > 1) {
    part = partial_sums(impl, builder, splits, n, acc);
    patches.push_back({offsetof(GemmPush, part_addr), part});
  }
  std::array<uint32_t, 3> grid = gemm_grid(core, tile, uint64_t(shape.n), uint64_t(shape.m), uint64_t(shape.batch) * splits);
  Launch& l = builder.launch(kernel, grid, push, std::move(patches));
  builder.use(l, a.ref.slot, Access::Read);
  builder.use(l, b.ref.slot, Access::Read);
  builder.use(l, part.slot, Access::Write);
  // `attach` (before the split sum's launch, which may move `l`) places the epilogue's
  // parameters itself where it is given.
  if (attach) attach(l);
  else attach_epilogue(builder, l, epi, offsetof(GemmPush, epi_addr));
  if (splits > 1) append_split_sum(impl, builder, out, part, c, n, splits, epi, partials_type(acc, out));
}

MatvecLanes matvec_lanes(const DeviceCore& core, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                         const GemmOperand& mat) {
  AccType acc = dot_acc_type(out);
  std::string acc4 = gemm_acc4_type(acc);
  // GPUs: neighbouring invocations read neighbouring matrix elements (outputs across lanes
  // where the rows are adjacent, else k across lanes). CPU drivers: outputs across lanes
  // whatever the layout, each invocation the whole k (LY = 1): the vector's loads are then
  // at the same address in all lanes, no k-split combine.
  bool cpu = gemm_cpu_paths(core);
  MatvecLanes m;
  m.cols = rows > 1 && (mat.strides[1] == 1 || cpu);
  if (m.cols) {
    m.lx = cpu ? 64 : 32;
    m.ly = cpu ? 1 : 256 / m.lx;
  } else {
    m.lx = k >= 256 ? 64 : k >= 64 ? 32 : 8;
    m.ly = 256 / m.lx;
  }
  // Four adjacent outputs per invocation in vector loads where rows, strides and offset allow.
  uint64_t mat_offset = mat.ref.byte_offset / dtype_size(mat.type);
  m.vw4 = !cpu && m.cols && mat.strides[1] == 1 && !acc4.empty() && !glsl_vec4_type(mat.type).empty() &&
          mat.type != DType::F8 && mat.type != DType::F8E4M3FN && rows % 4 == 0 && mat.strides[2] % 4 == 0 &&
          mat.strides[0] % 4 == 0 && mat_offset % 4 == 0;
  // Four-wide on GPUs: fewer outputs per workgroup (down to 16, 64 bytes of each row) and more
  // invocations along k where the outputs give fewer than 256 workgroups: the k-split then
  // stays inside the workgroup rather than in a second pass (tuning's dot.matvec_lx overrides).
  uint64_t target = 512;
  if (m.vw4) {
    uint32_t forced = tuning().dot.matvec_lx.value_or(0);
    if (forced == 4 || forced == 8 || forced == 16 || forced == 32) m.lx = forced;
    else
      while (m.lx > 4 && (uint64_t(rows) + m.lx * 4 - 1) / (m.lx * 4) * batch < 256) m.lx /= 2;
    m.ly = 256 / m.lx;
    target = 256;
  }
  uint64_t groups = (uint64_t(rows) + m.outputs() - 1) / m.outputs();
  // Split-K on GPUs: about `target` workgroups in all where the outputs alone give fewer.
  std::tie(m.splits, m.k_chunk) = split_k(core, groups * batch, k, uint64_t(batch) * rows, target, 64);
  // Vectors that all multiply one matrix (a product's rows or columns one by one): where the
  // grid stays at its target without a split, a workgroup takes 8 of them, else 4 (at most 4
  // with 8-byte sums), each matrix load serving them all, rather than reading the matrix again per vector. Each
  // output's sum keeps its order (the lanes above do not change).
  if (!cpu && mat.strides[0] == 0) {
    const bool narrow = acc_bytes(acc) <= 4;
    if (auto forced = tuning().dot.matvec_vecs; forced && (*forced == 1 || *forced == 4 || (*forced == 8 && narrow)))
      m.vecs = *forced;
    else if (m.splits == 1)
      for (uint32_t v : {8u, 4u})
        if ((v == 4 || narrow) && batch >= v && groups * ((uint64_t(batch) + v - 1) / v) >= target) {
          m.vecs = v;
          break;
        }
  }
  return m;
}

namespace {

// A variant of matvec.comp: the types and how its lanes split the outputs and the sums
// (matvec_lanes).
struct MatvecVariant {
  static constexpr const char* kTemplate = "matvec";
  DType out = DType::F32, mat = DType::F32, vec = DType::F32;
  bool cols = false, vw4 = false;
  uint32_t lx = 1, ly = 1;
  uint32_t vecs = 1;

  auto fields() const { return std::tie(out, mat, vec, cols, vw4, lx, ly, vecs); }

  KernelKey source() const {
    AccType acc = dot_acc_type(out);
    std::string acc4 = gemm_acc4_type(acc);
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = lx * ly;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, mat, vec, acc);
    d.emplace_back("LX", std::to_string(lx) + "u");
    d.emplace_back("LY", std::to_string(ly) + "u");
    d.emplace_back("COLS", cols ? "1" : "0");
    d.emplace_back("VW", vw4 ? "4" : "1");
    d.emplace_back("VECS", std::to_string(vecs) + "u");
    add_buffer_defines(d, "M", mat);
    add_buffer_defines(d, "V", vec);
    d.emplace_back("LOAD_M(x)", glsl_load(mat, acc));
    d.emplace_back("LOAD_V(x)", glsl_load(vec, acc));
    if (vw4) {
      bool floating = is_floating(acc);
      d.emplace_back("ACC4", acc4);
      d.emplace_back("ZERO4", acc4 + "(0)");
      d.emplace_back("MAC4(acc, m, v)", floating ? "fma(m, " + acc4 + "(v), acc)" : "((acc) + (m) * (v))");
      d.emplace_back("M_VEC", glsl_vec4_type(mat));
      d.emplace_back("M_VALIGN", std::to_string(vec4_alignment(mat)));
      d.emplace_back("LOAD_M4(q)", gemm_load4(mat, acc4));
    }
    append_glsl_use_defines(d);
    return key;
  }

  // Every type in each shape of lanes matvec_lanes gives: outputs across the lanes (GPUs,
  // CPU drivers; four-wide on GPUs where the type has vectors, each width tuning and size
  // pick), and k across the lanes (by k's length).
  // GPUs' variants also take 4 vectors a workgroup, or 8 with sums of up to 4 bytes.
  static std::vector<MatvecVariant> declared(const DeviceInfo&) {
    std::vector<MatvecVariant> all;
    for (DType t : kAllDTypes) {
      std::vector<uint32_t> vecs{1, 4};
      if (acc_bytes(dot_acc_type(t)) <= 4) vecs.push_back(8);
      for (uint32_t v : vecs) {
        all.push_back({t, t, t, true, false, 32, 8, v});
        if (!gemm_acc4_type(dot_acc_type(t)).empty() && vec4_loadable(t))
          for (uint32_t lx : {4u, 8u, 16u, 32u}) all.push_back({t, t, t, true, true, lx, 256 / lx, v});
        for (uint32_t lx : {64u, 32u, 8u}) all.push_back({t, t, t, false, false, lx, 256 / lx, v});
      }
      all.push_back({t, t, t, true, false, 64, 1});
    }
    return all;
  }
};

}  // namespace

void append_matvec(DeviceImpl& impl, LaunchBuilder& builder, DType out, uint32_t batch, uint32_t rows, uint32_t k,
                   const GemmOperand& mat, const GemmOperand& vec, BufferRef dst, const DotEpilogue* epi,
                   const MatvecOutput& output) {
  const auto& out_strides = output.strides;
  const DeviceCore& core = *impl.core;
  AccType acc = dot_acc_type(out);
  const MatvecLanes lanes = matvec_lanes(core, out, batch, rows, k, mat);
  const uint32_t splits = lanes.splits, k_chunk = lanes.k_chunk;
  uint64_t groups = (uint64_t(rows) + lanes.outputs() - 1) / lanes.outputs();
  MatvecVariant variant{out, mat.type, vec.type, lanes.cols, lanes.vw4, lanes.lx, lanes.ly, lanes.vecs};
  const Kernel& kernel =
      *dot_kernel(impl.kernels, variant, dot_prologue_code(mat, vec, {"M", "V"}, core.has(kCapFloat64)), epi);
  MatvecPush push{};
  push.batch = batch, push.rows = rows, push.k = k;
  push.smat_batch = uint32_t(mat.strides[0]), push.smat_row = uint32_t(mat.strides[1]);
  push.smat_k = uint32_t(mat.strides[2]);
  push.svec_batch = uint32_t(vec.strides[0]), push.svec_k = uint32_t(vec.strides[2]);
  push.splits = splits, push.k_chunk = splits > 1 ? k_chunk : k;
  push.sout_batch = out_strides ? (*out_strides)[0] : rows, push.sout_row = out_strides ? (*out_strides)[1] : 1;
  push.coords = output.b_axis | output.r_axis << 2;
  std::vector<AddressPatch> patches{{offsetof(MatvecPush, mat_addr), mat.ref},
                                    {offsetof(MatvecPush, vec_addr), vec.ref},
                                    {offsetof(MatvecPush, out_addr), dst}};
  BufferRef part{dst.slot, 0};  // unused with one split
  uint64_t n = uint64_t(batch) * rows;
  if (splits > 1) {
    part = partial_sums(impl, builder, splits, n, acc);
    patches.push_back({offsetof(MatvecPush, part_addr), part});
  }
  const auto& max_count = core.info().max_workgroup_count;
  std::array<uint32_t, 3> grid{uint32_t(std::min<uint64_t>(groups, max_count[0])),
                               uint32_t(std::min<uint64_t>((uint64_t(batch) + lanes.vecs - 1) / lanes.vecs, max_count[1])),
                               uint32_t(splits)};
  Launch& l = builder.launch(kernel, grid, push, std::move(patches));
  builder.use(l, mat.ref.slot, Access::Read);
  builder.use(l, vec.ref.slot, Access::Read);
  builder.use(l, splits > 1 ? part.slot : dst.slot, Access::Write);
  attach_epilogue(builder, l, epi, offsetof(MatvecPush, epi_addr));
  if (splits == 1) return;

  append_split_sum(impl, builder, out, part, dst, n, splits, epi);
}

namespace {

// A variant of dot_split_sum.comp: the output's type and the partial sums' (accumulators of
// acc_of(partials): the output's own, or the 8-bit tensor cores' 32-bit integers).
struct SplitSumVariant {
  static constexpr const char* kTemplate = "dot_split_sum";
  DType out = DType::F32, partials = DType::F32;

  auto fields() const { return std::tie(out, partials); }

  KernelKey source() const {
    AccType acc = acc_of(partials);
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = 256;
    auto& d = key.defines;
    fold_features({out}, acc).add_defines(d);
    d.emplace_back("ACC", glsl_name(acc));
    d.emplace_back("ZERO", glsl_name(acc) + "(0)");
    add_buffer_defines(d, "OUT", out);
    d.emplace_back("STORE_OUT(v)", glsl_store(out));
    append_glsl_use_defines(d);
    return key;
  }

  // Every type from its own accumulators, and the integers from the tensor cores' 32-bit ones.
  static std::vector<SplitSumVariant> declared(const DeviceInfo&) {
    std::vector<SplitSumVariant> all;
    for (DType t : kAllDTypes) {
      all.push_back({t, t});
      if (!is_integer(t)) continue;
      for (DType p : {DType::S32, DType::U32})
        if (acc_of(p) != dot_acc_type(t)) all.push_back({t, p});
    }
    return all;
  }
};

}  // namespace

void append_split_sum(DeviceImpl& impl, LaunchBuilder& builder, DType out, BufferRef part, BufferRef dst, uint64_t n,
                      uint32_t splits, const DotEpilogue* epi, std::optional<DType> partials) {
  const DeviceCore& core = *impl.core;
  const Kernel& sum = *epilogue_kernel(impl.kernels, SplitSumVariant{out, partials.value_or(out)}, epi);
  SplitSumPush push{};
  push.n = uint32_t(n), push.splits = splits;
  Launch& l = builder.launch(sum, {workgroups_for(core, n, 256), 1, 1}, push,
                             {{offsetof(SplitSumPush, part_addr), part}, {offsetof(SplitSumPush, out_addr), dst}});
  builder.use(l, part.slot, Access::Read);
  builder.use(l, dst.slot, Access::Write);
  attach_epilogue(builder, l, epi, offsetof(SplitSumPush, epi_addr));
}

void declare_dot_kernel_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<GemmVariant>(out, info);
  declare_gemm_rows_variants(out, info);
  declare_variants<MatvecVariant>(out, info);
  declare_variants<SplitSumVariant>(out, info);
}

}  // namespace nxv
