#include "ops/dot/dot_coopmat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "common/tuning.hpp"
#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "ops/dot/gemm_push.h"

namespace nxv {
namespace {

uint64_t tiles(const GemmShape& s, uint32_t bm, uint32_t bn) {
  return uint64_t(s.batch) * uint64_t((s.m + bm - 1) / bm) * uint64_t((s.n + bn - 1) / bn);
}

// Elements of the input type in a 16-byte chunk (the kernel's E): 8 16-bit ones, 16 bytes.
uint32_t chunk_elements(DType in) { return dtype_size(in) == 1 ? 16 : 8; }

// Shared bytes of the two stages of a tile, for either layout of each operand.
uint32_t stage_bytes(const CoopmatTile& t, uint32_t elem_bytes) {
  uint32_t e = 16 / elem_bytes;
  uint32_t a = std::max(t.bm * (t.bk + e), t.bk * (t.bm + e)), b = std::max(t.bk * (t.bn + e), t.bn * (t.bk + e));
  return 2 * elem_bytes * (a + b) + t.subgroups() * t.fm * t.fn * 4;  // two stages, and the 32-bit scratch
}

bool valid(const CoopmatTile& t, uint32_t e) {
  return t.wm && t.wn && t.bm % t.wm == 0 && t.bn % t.wn == 0 && t.wm % t.fm == 0 && t.wn % t.fn == 0 &&
         t.bk % t.fk == 0 && t.bk % e == 0 && t.fm % e == 0 && t.fn % e == 0 &&
         t.subgroups() * t.subgroup <= 1024 && t.bm <= 512 && t.bn <= 512 && t.bk <= 256;
}

// A subgroup-scope shape for `in` x `in` into `acc` whose sides are multiples of 8 (the shared
// tiles are addressed 16 bytes at a time), 16x16x16 first for 16-bit inputs, 16x16x32 for 8-bit.
std::optional<CooperativeMatrixShape> fragment_shape(const DeviceInfo& info, const std::string& in,
                                                     const std::string& acc) {
  std::optional<CooperativeMatrixShape> best;
  uint32_t k_first = in == "s8" || in == "u8" ? 32 : 16;
  for (const auto& s : info.cooperative_matrix_shapes) {
    if (s.scope != "subgroup" || s.a_type != in || s.b_type != in || s.c_type != acc || s.result_type != acc) continue;
    if (s.m % 8 || s.n % 8 || s.k % 8 || s.m > 32 || s.n > 32 || s.k > 32) continue;
    if (!best || (s.m == 16 && s.n == 16 && s.k == k_first)) best = s;
  }
  return best;
}

// Whether an operand's tile can be read a chunk (e elements) at a time: its contiguous axis has
// stride 1 and an extent that is a multiple of e, its other strides and its offset are multiples of e.
bool reads_by_chunk(const GemmOperand& x, int64_t s_inner, int64_t s_outer, int64_t inner_extent) {
  int64_t size = int64_t(dtype_size(x.type)), e = chunk_elements(x.type);
  return s_inner == 1 && s_outer % e == 0 && x.strides[0] % e == 0 && x.ref.byte_offset % size == 0 &&
         (x.ref.byte_offset / size) % e == 0 && inner_extent % e == 0;
}

// Integer outputs the 32-bit integer accumulators give exactly as Nx's wrapping sums: any of
// up to 32 bits (sums agree modulo 2^32), 64-bit ones while no sum of K products can leave the
// accumulator's range.
bool int8_output_exact(DType in, DType out, uint64_t k) {
  if (!is_integer(out)) return false;
  if (dtype_size(out) <= 4) return true;
  uint64_t max_product = in == DType::S8 ? 128 * 128 : 255 * 255, range = in == DType::S8 ? 1ull << 31 : 1ull << 32;
  return k * max_product < range;
}

// Whether the device multiplies `in` x `in` into `out` on the tier (its features; 8-bit inputs
// where the 32-bit integer accumulators give `out` exactly for `k` products).
bool coopmat_types(const DeviceInfo& info, DType in, DType out, uint64_t k) {
  const auto& ft = info.features;
  if (!ft.cooperative_matrix) return false;
  bool int8 = in == DType::S8 || in == DType::U8;
  if (int8) {
    // 8-bit integers into 32-bit integer fragments: exact where the output is (Nx wraps).
    if (!int8_output_exact(in, out, k) || !ft.int8 || !ft.storage8) return false;
  } else if ((in != DType::F16 && in != DType::BF16) || (out != DType::F32 && out != in)) {
    return false;
  }
  bool bf16 = in == DType::BF16;
  if (!int8 && (bf16 ? !ft.bfloat16_cooperative_matrix : !ft.float16)) return false;
  return ft.storage16 && ft.int16 && ft.subgroup_basic;
}

// The tile for inputs of `in` on this device: 128x128 where `big`, else 64x64, or `forced`
// (tuning's bm, bn, bk, wm, wn) where valid; nullopt where the device has no fragment shape for
// them or the tile does not fit.
std::optional<CoopmatTile> coopmat_tile(const DeviceInfo& info, DType in, bool big,
                                        const std::optional<std::array<uint32_t, 5>>& forced) {
  bool int8 = in == DType::S8 || in == DType::U8, bf16 = in == DType::BF16;
  auto frag = int8 ? fragment_shape(info, in == DType::S8 ? "s8" : "u8", in == DType::S8 ? "s32" : "u32")
                   : fragment_shape(info, bf16 ? "bf16" : "f16", "f32");
  if (!frag || info.subgroup_size == 0 || (frag->m * frag->n) % info.subgroup_size) return std::nullopt;
  CoopmatTile t;
  t.fm = frag->m, t.fn = frag->n, t.fk = frag->k, t.subgroup = info.subgroup_size;
  // Steps of 64 bytes along k.
  uint32_t bk = 64 / uint32_t(dtype_size(in));
  if (big) t.bm = 128, t.bn = 128, t.bk = bk, t.wm = 64, t.wn = 64;
  else t.bm = 64, t.bn = 64, t.bk = bk, t.wm = 32, t.wn = 32;
  uint32_t e = chunk_elements(in), elem = uint32_t(dtype_size(in));
  if (forced) {
    CoopmatTile f = t;
    f.bm = (*forced)[0], f.bn = (*forced)[1], f.bk = (*forced)[2], f.wm = (*forced)[3], f.wn = (*forced)[4];
    if (valid(f, e)) t = f;
  }
  t.wm = std::max(t.wm, t.fm), t.wn = std::max(t.wn, t.fn), t.bk = std::max(t.bk, t.fk);
  uint32_t limit = info.max_shared_memory ? info.max_shared_memory : 16384;
  while (t.bk > t.fk && stage_bytes(t, elem) > limit) t.bk /= 2;
  if (!valid(t, e) || stage_bytes(t, elem) > limit || t.subgroups() * t.subgroup > info.max_workgroup_invocations)
    return std::nullopt;
  return t;
}

// The subgroup size a pipeline of `tile` requires: the tile's where the device can require it, else 0.
uint32_t required_subgroup_size(const DeviceInfo& info, const CoopmatTile& tile) {
  bool can = info.features.subgroup_size_control && tile.subgroup >= info.min_subgroup_size &&
             tile.subgroup <= info.max_subgroup_size;
  return can ? tile.subgroup : 0;
}

// The accumulators' type for inputs of `in` (the partial sums' with split-K).
AccType coopmat_acc(DType in) {
  if (dtype_size(in) != 1) return AccType::F32;
  return in == DType::S8 ? AccType::S32 : AccType::U32;
}

// A variant of gemm_coopmat.comp: the types, the tile, each operand's layout (along its rows
// or not, read a 16-byte chunk at a time or not), and A gathered from a conv's input or not
// (with the conv's spatial axes, input dilation, and lanes along m where it stores).
struct GemmCoopmatVariant {
  static constexpr const char* kTemplate = "gemm_coopmat";
  DType out = DType::F32, a = DType::F16, b = DType::F16;
  CoopmatTile tile{};
  bool a_row = true, b_row = true, a_vec = false, b_vec = false;
  bool conv_a = false;
  uint32_t spatial = 0;  // with conv_a
  bool input_dilation = false, lanes_m = false;
  uint32_t required_subgroup = 0;  // required_subgroup_size(info, tile)

  auto fields() const {
    return std::tie(out, a, b, tile, a_row, b_row, a_vec, b_vec, conv_a, spatial, input_dilation, lanes_m,
                    required_subgroup);
  }

  KernelKey source() const {
    bool bf16 = a == DType::BF16, int8 = dtype_size(a) == 1;
    std::string frag_in = int8 ? (a == DType::S8 ? "int8_t" : "uint8_t") : "float16_t";
    AccType acc = coopmat_acc(a);
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = tile.subgroups() * tile.subgroup;
    key.required_subgroup_size = required_subgroup;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, a, b, acc);
    for (auto [name, v] : {std::pair{"BM", tile.bm}, {"BN", tile.bn}, {"BK", tile.bk}, {"WM", tile.wm}, {"WN", tile.wn},
                           {"FM", tile.fm}, {"FN", tile.fn}, {"FK", tile.fk}, {"SG", tile.subgroup},
                           {"NSG", tile.subgroups()}})
      d.emplace_back(name, std::to_string(v) + "u");
    d.emplace_back("A_ROW", a_row ? "1" : "0");
    d.emplace_back("B_ROW", b_row ? "1" : "0");
    d.emplace_back("A_VEC", a_vec ? "1" : "0");
    d.emplace_back("B_VEC", b_vec ? "1" : "0");
    if (bf16) d.emplace_back("NXV_SPIRV_BF16", "1");
    if (int8) d.emplace_back("ELEM8", "1");
    d.emplace_back("FRAG_IN", frag_in);
    d.emplace_back("FRAG_ACC", glsl_name(acc));
    if (conv_a) {
      d.emplace_back("CONV_A", "1");
      d.emplace_back("NR", std::to_string(spatial));
      d.emplace_back("IDIL", input_dilation ? "1" : "0");
      d.emplace_back("CONV_LANES_M", lanes_m ? "1" : "0");
    }
    append_glsl_use_defines(d);
    return key;
  }

  // Only where the device has fragments for the inputs: f16 and bf16 into f32 and their own
  // type, 8-bit integers into their own type and 32- and 64-bit integers of their signedness;
  // both tiles, each operand along its rows or not, read by chunks or not; and A gathered from
  // a conv's 16-bit input (1 to 3 spatial axes, input dilation or not, lanes along m or not).
  static std::vector<GemmCoopmatVariant> declared(const DeviceInfo& info) {
    std::vector<GemmCoopmatVariant> all;
    if (info.type == "cpu") return all;
    for (DType in : {DType::F16, DType::BF16, DType::S8, DType::U8}) {
      bool int8 = dtype_size(in) == 1;
      std::vector<DType> outs = int8 ? std::vector<DType>{in, in == DType::S8 ? DType::S32 : DType::U32,
                                                          in == DType::S8 ? DType::S64 : DType::U64}
                                     : std::vector<DType>{DType::F32, in};
      for (DType out : outs) {
        if (!coopmat_types(info, in, out, 1)) continue;
        for (bool big : {true, false}) {
          std::optional<CoopmatTile> tile = coopmat_tile(info, in, big, std::nullopt);
          if (!tile) continue;
          GemmCoopmatVariant v{.out = out, .a = in, .b = in, .tile = *tile};
          v.required_subgroup = required_subgroup_size(info, *tile);
          for (bool a_row : {true, false})
            for (bool b_row : {true, false})
              for (bool chunks : {true, false}) {
                v.a_row = a_row, v.b_row = b_row, v.a_vec = chunks, v.b_vec = chunks;
                all.push_back(v);
              }
          if (int8) continue;
          v.conv_a = true, v.a_row = true, v.a_vec = true, v.b_row = true, v.b_vec = true;
          for (uint32_t spatial : {1u, 2u, 3u})
            for (bool idil : {false, true})
              for (bool lanes_m : {false, true}) {
                v.spatial = spatial, v.input_dilation = idil, v.lanes_m = lanes_m;
                all.push_back(v);
              }
        }
      }
    }
    return all;
  }
};

}  // namespace

std::optional<CoopmatTile> coopmat_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                             const GemmOperand& b, DType out) {
  const DeviceInfo& info = core.info();
  if (tuning().dot.no_coopmat || gemm_cpu_paths(core) || core.profile().cpu_driver) return std::nullopt;
  if (a.type != b.type || !coopmat_types(info, a.type, out, uint64_t(shape.k))) return std::nullopt;
  // 128x128 (four subgroups of 64x64) where there are enough such tiles to fill a large GPU a
  // couple of times over; 64x64 (four of 32x32) otherwise, split-K making up the rest.
  return coopmat_tile(info, a.type, tiles(shape, 128, 128) >= 256, tuning().dot.coopmat_tile);
}

void append_gemm_coopmat(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                         const GemmOperand& a, const GemmOperand& b, BufferRef c, const CoopmatTile& tile,
                         const CoopmatGatheredA* gathered) {
  const DeviceCore& core = *impl.core;
  // Each operand's tile lies along its contiguous axis (A: k, else m; B: n, else k). A
  // gathered conv input is read along k (its channels), 8 at a time.
  bool a_row = gathered || a.strides[2] == 1 || a.strides[1] != 1, b_row = b.strides[2] == 1 || b.strides[1] != 1;
  bool a_vec = gathered || (a_row ? reads_by_chunk(a, a.strides[2], a.strides[1], shape.k)
                                  : reads_by_chunk(a, a.strides[1], a.strides[2], shape.m));
  bool b_vec = b_row ? reads_by_chunk(b, b.strides[2], b.strides[1], shape.n)
                     : reads_by_chunk(b, b.strides[1], b.strides[2], shape.k);
  GemmCoopmatVariant variant{.out = out, .a = a.type, .b = b.type, .tile = tile, .a_row = a_row, .b_row = b_row,
                             .a_vec = a_vec, .b_vec = b_vec};
  if (gathered) {
    variant.conv_a = true, variant.spatial = gathered->spatial;
    variant.input_dilation = gathered->input_dilation, variant.lanes_m = gathered->lanes_m;
  }
  variant.required_subgroup = required_subgroup_size(core.info(), tile);
  AccType acc = coopmat_acc(a.type);
  const StoreEpilogue* epi = gathered ? gathered->epilogue : nullptr;
  const Kernel& kernel = *epilogue_kernel(impl.kernels, variant, epi);
  std::function<void(Launch&)> attach;
  if (gathered)
    attach = [&](Launch& l) {
      builder.params(l, uint32_t{0}, offsetof(GemmPush, epi_addr), gathered->patches);
      l.params = gathered->params;  // the block's bytes as the conv built them
      use_epilogue_tensors(builder, l, epi);
    };
  // Split-K in whole BK steps; partial sums in f32.
  GemmTile grid_tile;
  grid_tile.bm = tile.bm, grid_tile.bn = tile.bn;
  GemmOperand a_read = a;
  if (gathered) a_read.ref = gathered->input, a_read.strides = {0, 0, 1};
  launch_gemm_kernel(impl, builder, kernel, out, shape, a_read, b, c, grid_tile, acc, tile.bk, epi, attach);
}

void declare_gemm_coopmat_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<GemmCoopmatVariant>(out, info);
}

}  // namespace nxv
