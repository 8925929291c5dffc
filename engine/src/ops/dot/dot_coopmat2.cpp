#include "ops/dot/dot_coopmat2.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "ops/dot/gemm_push.h"

namespace nxv {
namespace {

constexpr uint16_t kGemmCoopmat2 = 5;  // the dot family's variant kind (4: dot_coopmat.cpp)

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

uint64_t tiles(const GemmShape& s, uint32_t bm, uint32_t bn) {
  return uint64_t(s.batch) * uint64_t((s.m + bm - 1) / bm) * uint64_t((s.n + bn - 1) / bn);
}

// Whether the device reports a workgroup-scope flexible shape of `in` x `in` into f32 that the
// tile's sizes are multiples of, for the tile's invocation count.
bool fits_device(const CooperativeMatrix2Info& c2, const std::string& in, const Coopmat2Tile& t) {
  if (!t.bm || !t.bn || !t.bk || t.bm % 16 || t.bn % 16 || t.bk % 16 || t.invocations % 32 || !t.invocations ||
      t.invocations > c2.max_workgroup_size)
    return false;
  if (c2.max_dimension && (t.bm > c2.max_dimension || t.bn > c2.max_dimension || t.bk > c2.max_dimension))
    return false;
  for (const auto& s : c2.flexible_shapes) {
    if (s.scope != "workgroup" || s.a_type != in || s.b_type != in || s.c_type != "f32" || s.result_type != "f32")
      continue;
    if (s.workgroup_invocations != t.invocations || !s.m || !s.n || !s.k) continue;
    if (t.bm % s.m == 0 && t.bn % s.n == 0 && t.bk % s.k == 0) return true;
  }
  return false;
}

// An operand's unit-stride axis: 0 along k (A [m][k], B [n][k]), 1 along m or n, -1 none (or
// a zero stride on the other axis: left to the KHR tier).
int unit_axis(const GemmOperand& x, int64_t s_k, int64_t s_other) {
  if (s_k == 1 && s_other != 0) return 0;
  if (s_other == 1 && s_k != 0) return 1;
  return -1;
}

// 16-byte reads: the address, the strides other than the unit one and the batch stride are
// multiples of 8 elements.
bool aligned8(const GemmOperand& x, int64_t s_outer) {
  return x.ref.byte_offset % 16 == 0 && s_outer % 8 == 0 && x.strides[0] % 8 == 0;
}

}  // namespace

std::optional<Coopmat2Tile> coopmat2_gemm_tile(const DeviceCore& core, const GemmShape& shape, const GemmOperand& a,
                                               const GemmOperand& b, DType out) {
  const DeviceInfo& info = core.info();
  const auto& ft = info.features;
  if (!env_on("NXV_DOT_COOPMAT2") || env_on("NXV_DOT_NO_COOPMAT2") || env_on("NXV_DOT_NO_COOPMAT") ||
      gemm_cpu_paths(core) || info.type == "cpu" ||
      !ft.cooperative_matrix || !ft.cooperative_matrix2)
    return std::nullopt;
  const auto& c2 = info.cooperative_matrix2;
  if (!c2.workgroup_scope || !c2.flexible_dimensions || !c2.tensor_addressing) return std::nullopt;
  if (a.type != b.type || (a.type != DType::F16 && a.type != DType::BF16) || (out != DType::F32 && out != a.type))
    return std::nullopt;
  bool bf16 = a.type == DType::BF16;
  if ((bf16 ? !ft.bfloat16_cooperative_matrix : !ft.float16) || !ft.storage16 || !ft.int16) return std::nullopt;
  if (unit_axis(a, a.strides[2], a.strides[1]) < 0 || unit_axis(b, b.strides[1], b.strides[2]) < 0)
    return std::nullopt;
  std::string in = bf16 ? "bf16" : "f16";
  Coopmat2Tile t;
  if (const char* env = std::getenv("NXV_DOT_COOPMAT2_TILE"); env && *env) {
    if (std::sscanf(env, "%u,%u,%u,%u,%u", &t.bm, &t.bn, &t.bk, &t.invocations, &t.unroll) < 4 || !t.unroll ||
        t.unroll > 16)
      return std::nullopt;
  } else {
    // The largest tile that still gives about 256 workgroups (split-K makes up the rest).
    const std::array<Coopmat2Tile, 3> by_size{{{128, 256, 64, 256, 4}, {128, 128, 64, 256, 4}, {64, 64, 64, 128, 4}}};
    t = by_size.back();
    for (const auto& c : by_size)
      if (tiles(shape, c.bm, c.bn) >= 256 && fits_device(c2, in, c)) {
        t = c;
        break;
      }
  }
  if (!fits_device(c2, in, t) || t.invocations > info.max_workgroup_invocations) return std::nullopt;
  return t;
}

void append_gemm_coopmat2(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                          const GemmOperand& a, const GemmOperand& b, BufferRef c, const Coopmat2Tile& tile) {
  bool a_t = unit_axis(a, a.strides[2], a.strides[1]) == 1, b_t = unit_axis(b, b.strides[1], b.strides[2]) == 0;
  bool a_al8 = aligned8(a, a_t ? a.strides[2] : a.strides[1]), b_al8 = aligned8(b, b_t ? b.strides[2] : b.strides[1]);
  bool c16 = out != DType::F32;
  bool c_al16 = c.byte_offset % 16 == 0;
  bool bf16 = a.type == DType::BF16;
  VariantKey variant{.family = uint16_t(FamilyId::dot), .op = kGemmCoopmat2};
  variant.types = {out, a.type, b.type};
  variant.type_count = 3;
  variant.layout = uint8_t((a_t ? 1 : 0) | (b_t ? 2 : 0) | (a_al8 ? 4 : 0) | (b_al8 ? 8 : 0) | (c_al16 ? 16 : 0));
  variant.tile = (tile.bm / 16 - 1) | ((tile.bn / 16 - 1) << 6) | ((tile.bk / 16 - 1) << 12) |
                 ((tile.invocations / 32 - 1) << 18) | ((tile.unroll - 1) << 23);
  const Kernel& kernel = impl.kernels.get(variant, [&] {
    KernelKey key;
    key.name = "gemm_coopmat2";
    key.workgroup_size = tile.invocations;
    auto& d = key.defines;
    for (auto [name, v] : {std::pair{"BM", tile.bm}, {"BN", tile.bn}, {"BK", tile.bk}, {"UNROLL", tile.unroll}})
      d.emplace_back(name, std::to_string(v) + "u");
    d.emplace_back("A_T", a_t ? "1" : "0");
    d.emplace_back("B_T", b_t ? "1" : "0");
    d.emplace_back("A_ALIGN8", a_al8 ? "1" : "0");
    d.emplace_back("B_ALIGN8", b_al8 ? "1" : "0");
    d.emplace_back("A_ALIGN", a_al8 ? "16" : "2");
    d.emplace_back("B_ALIGN", b_al8 ? "16" : "2");
    d.emplace_back("C16", c16 ? "1" : "0");
    d.emplace_back("C_ALIGN", c_al16 ? "16" : c16 ? "2" : "4");
    if (bf16) d.emplace_back("NXV_SPIRV_BF16", "1");
    append_glsl_use_defines(d);
    return key;
  });
  GemmTile grid_tile;
  grid_tile.bm = tile.bm, grid_tile.bn = tile.bn;
  launch_gemm_kernel(impl, builder, kernel, out, shape, a, b, c, grid_tile, "float", tile.bk);
}

}  // namespace nxv
