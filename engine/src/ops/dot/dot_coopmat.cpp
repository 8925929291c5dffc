#include "ops/dot/dot_coopmat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "ops/dot/gemm_push.h"

namespace nxv {
namespace {

constexpr uint16_t kGemmCoopmat = 4;  // the dot family's variant kind (dot_kernels.cpp has 0-3)

uint64_t tiles(const GemmShape& s, uint32_t bm, uint32_t bn) {
  return uint64_t(s.batch) * uint64_t((s.m + bm - 1) / bm) * uint64_t((s.n + bn - 1) / bn);
}

// Shared bytes of the two stages of a tile, for either layout of each operand.
uint32_t stage_bytes(const CoopmatTile& t) {
  uint32_t a = std::max(t.bm * (t.bk + 8), t.bk * (t.bm + 8)), b = std::max(t.bk * (t.bn + 8), t.bn * (t.bk + 8));
  return 2 * 2 * (a + b) + t.subgroups() * t.fm * t.fn * 4;  // two stages, and the f32 scratch
}

bool valid(const CoopmatTile& t) {
  return t.wm && t.wn && t.bm % t.wm == 0 && t.bn % t.wn == 0 && t.wm % t.fm == 0 && t.wn % t.fn == 0 &&
         t.bk % t.fk == 0 && t.bk % 8 == 0 && t.subgroups() * t.subgroup <= 1024 && t.bm <= 512 && t.bn <= 512 &&
         t.bk <= 256;
}

// A subgroup-scope shape for `in` x `in` into f32 whose sides are multiples of 8 (the shared
// tiles are addressed 8 elements at a time), 16x16x16 first.
std::optional<CooperativeMatrixShape> fragment_shape(const DeviceInfo& info, const std::string& in) {
  std::optional<CooperativeMatrixShape> best;
  for (const auto& s : info.cooperative_matrix_shapes) {
    if (s.scope != "subgroup" || s.a_type != in || s.b_type != in || s.c_type != "f32" || s.result_type != "f32")
      continue;
    if (s.m % 8 || s.n % 8 || s.k % 8 || s.m > 32 || s.n > 32 || s.k > 32) continue;
    if (!best || (s.m == 16 && s.n == 16 && s.k == 16)) best = s;
  }
  return best;
}

// Whether an operand's tile can be read 8 elements at a time: its contiguous axis has stride 1
// and an extent that is a multiple of 8, its other strides and its offset are multiples of 8.
bool reads_by_8(const GemmOperand& x, int64_t s_inner, int64_t s_outer, int64_t inner_extent) {
  return s_inner == 1 && s_outer % 8 == 0 && x.strides[0] % 8 == 0 && (x.ref.byte_offset / 2) % 8 == 0 &&
         x.ref.byte_offset % 2 == 0 && inner_extent % 8 == 0;
}

}  // namespace

std::optional<CoopmatTile> coopmat_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                             const GemmOperand& b, DType out) {
  const DeviceInfo& info = core.info();
  const auto& ft = info.features;
  const char* off = std::getenv("NXV_DOT_NO_COOPMAT");
  if ((off && std::string(off) == "1") || gemm_cpu_paths(core) || info.type == "cpu" || !ft.cooperative_matrix)
    return std::nullopt;
  if (a.type != b.type || (a.type != DType::F16 && a.type != DType::BF16) || (out != DType::F32 && out != a.type))
    return std::nullopt;
  bool bf16 = a.type == DType::BF16;
  if ((bf16 ? !ft.bfloat16_cooperative_matrix : !ft.float16) || !ft.storage16 || !ft.int16 || !ft.subgroup_basic)
    return std::nullopt;
  auto frag = fragment_shape(info, bf16 ? "bf16" : "f16");
  if (!frag || info.subgroup_size == 0 || (frag->m * frag->n) % info.subgroup_size) return std::nullopt;
  CoopmatTile t;
  t.fm = frag->m, t.fn = frag->n, t.fk = frag->k, t.subgroup = info.subgroup_size;
  // 128x128 (four subgroups of 64x64) where there are enough such tiles to fill a large GPU a
  // couple of times over; 64x64 (four of 32x32) otherwise, split-K making up the rest.
  if (tiles(shape, 128, 128) >= 256) t.bm = 128, t.bn = 128, t.bk = 32, t.wm = 64, t.wn = 64;
  else t.bm = 64, t.bn = 64, t.bk = 32, t.wm = 32, t.wn = 32;
  if (const char* env = std::getenv("NXV_DOT_COOPMAT_TILE"); env && *env) {
    CoopmatTile f = t;
    if (std::sscanf(env, "%u,%u,%u,%u,%u", &f.bm, &f.bn, &f.bk, &f.wm, &f.wn) == 5 && valid(f)) t = f;
  }
  t.wm = std::max(t.wm, t.fm), t.wn = std::max(t.wn, t.fn), t.bk = std::max(t.bk, t.fk);
  uint32_t limit = info.max_shared_memory ? info.max_shared_memory : 16384;
  while (t.bk > t.fk && stage_bytes(t) > limit) t.bk /= 2;
  if (!valid(t) || stage_bytes(t) > limit || t.subgroups() * t.subgroup > info.max_workgroup_invocations)
    return std::nullopt;
  return t;
}

void append_gemm_coopmat(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                         const GemmOperand& a, const GemmOperand& b, BufferRef c, const CoopmatTile& tile,
                         const CoopmatGatheredA* gathered) {
  const DeviceCore& core = *impl.core;
  // Each operand's tile lies along its contiguous axis (A: k, else m; B: n, else k). A
  // gathered conv input is read along k (its channels), 8 at a time.
  bool a_row = gathered || a.strides[2] == 1 || a.strides[1] != 1, b_row = b.strides[2] == 1 || b.strides[1] != 1;
  bool a_vec = gathered || (a_row ? reads_by_8(a, a.strides[2], a.strides[1], shape.k)
                                  : reads_by_8(a, a.strides[1], a.strides[2], shape.m));
  bool b_vec = b_row ? reads_by_8(b, b.strides[2], b.strides[1], shape.n) : reads_by_8(b, b.strides[1], b.strides[2], shape.k);
  bool bf16 = a.type == DType::BF16;
  VariantKey variant{.family = uint16_t(FamilyId::dot), .op = kGemmCoopmat};
  variant.types = {out, a.type, b.type};
  variant.type_count = 3;
  variant.layout = uint8_t((a_row ? 1 : 0) | (b_row ? 2 : 0) | (a_vec ? 4 : 0) | (b_vec ? 8 : 0) |
                           (gathered ? 16 : 0) | (gathered && gathered->input_dilation ? 32 : 0));
  variant.tile = (tile.bm / 8 - 1) | ((tile.bn / 8 - 1) << 6) | ((tile.bk / 8 - 1) << 12) | ((tile.wm / 8 - 1) << 18) |
                 ((tile.wn / 8 - 1) << 24);
  variant.switches = tile.fm | (tile.fn << 6) | (tile.fk << 12) | (tile.subgroup << 18) |
                     ((gathered ? gathered->spatial : 0) << 26) | (gathered && gathered->lanes_m ? 1u << 30 : 0u);
  const StoreEpilogue* epi = gathered ? gathered->epilogue : nullptr;
  const Kernel& kernel = *epilogue_kernel(impl, variant, epi, [&] {
    KernelKey key;
    key.name = "gemm_coopmat";
    key.workgroup_size = tile.subgroups() * tile.subgroup;
    const auto& info = core.info();
    if (info.features.subgroup_size_control && tile.subgroup >= info.min_subgroup_size &&
        tile.subgroup <= info.max_subgroup_size)
      key.required_subgroup_size = tile.subgroup;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, a.type, b.type, "float");
    for (auto [name, v] : {std::pair{"BM", tile.bm}, {"BN", tile.bn}, {"BK", tile.bk}, {"WM", tile.wm}, {"WN", tile.wn},
                           {"FM", tile.fm}, {"FN", tile.fn}, {"FK", tile.fk}, {"SG", tile.subgroup},
                           {"NSG", tile.subgroups()}})
      d.emplace_back(name, std::to_string(v) + "u");
    d.emplace_back("A_ROW", a_row ? "1" : "0");
    d.emplace_back("B_ROW", b_row ? "1" : "0");
    d.emplace_back("A_VEC", a_vec ? "1" : "0");
    d.emplace_back("B_VEC", b_vec ? "1" : "0");
    if (bf16) d.emplace_back("NXV_SPIRV_BF16", "1");
    if (gathered) {
      d.emplace_back("CONV_A", "1");
      d.emplace_back("NR", std::to_string(gathered->spatial));
      d.emplace_back("IDIL", gathered->input_dilation ? "1" : "0");
      d.emplace_back("CONV_LANES_M", gathered->lanes_m ? "1" : "0");
    }
    append_glsl_use_defines(d);
    return key;
  });
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
  launch_gemm_kernel(impl, builder, kernel, out, shape, a_read, b, c, grid_tile, "float", tile.bk, epi, attach);
}

}  // namespace nxv
