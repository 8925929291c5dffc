#include "ops/dot/dot_cpu.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/tuning.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "nxv/ops.hpp"
#include "ops/dot/dot_epilogue.hpp"
#include "ops/dot/gemm_push.h"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr uint16_t kGemmCpu = 6;  // the dot family's variant kind (dot_kernels.cpp 0-3, dot_coopmat*.cpp 4-5)

std::optional<CpuGemmTile> tuned_tile() {
  const auto& forced = tuning().dot.cpu_tile;
  if (!forced) return std::nullopt;
  CpuGemmTile t;
  t.tm = (*forced)[0], t.tn = (*forced)[1], t.wg = (*forced)[2];
  if (!t.tm || !t.tn || t.tm > 32 || t.tn > 32 ||
      t.wg < 8 || t.wg > 256)
    return std::nullopt;
  return t;
}

// The subgroup size the kernel's A loads are shared across (its SG), or 0 where it takes no
// subgroup operations (none, or masked off with NX_VULKAN_DISABLE=subgroup).
uint32_t shuffle_width(const DeviceCore& core) {
  const DeviceInfo& info = core.info();
  uint32_t sg = info.subgroup_size;
  bool ok = info.features.subgroup_basic && info.features.subgroup_shuffle && sg >= 4 && sg <= 64 && (sg & (sg - 1)) == 0;
  return ok ? sg : 0;
}

// subgroupShuffle of an accumulator: 64-bit integers travel as two 32-bit halves (shuffles of
// 64-bit integers need the subgroup extended types).
std::string shuffle(AccType acc) {
  if (is_int64(acc))
    return glsl_name(acc) + "(packUint2x32(subgroupShuffle(unpackUint2x32(uint64_t(v)), s)))";
  return "subgroupShuffle(v, s)";
}

uint32_t pow2_at_least(uint64_t x, uint32_t lo, uint32_t hi) {
  uint32_t p = lo;
  while (p < hi && p < x) p *= 2;
  return p;
}

}  // namespace

std::optional<CpuGemmTile> cpu_gemm_tile(const DeviceCore& core, const GemmShape& shape, DType out) {
  if (tuning().dot.no_cpu_gemm || !gemm_cpu_paths(core)) return std::nullopt;
  if (auto forced = tuned_tile()) return forced;
  // 16 x 2 was the fastest of 8-32 rows by 1-2 columns at 511^3 f32 on lavapipe (see
  // bench/RESULTS.md); half the rows per 8-byte accumulator, a quarter per 16-byte one.
  const uint32_t bytes = acc_bytes(dot_acc_type(out));
  CpuGemmTile t;
  t.tm = bytes <= 4 ? 16 : bytes <= 8 ? 8 : 4;
  t.tn = 2;
  // Fewer rows where the product has fewer (one kernel per power of two).
  if (uint64_t(shape.m) < t.tm) t.tm = pow2_at_least(uint64_t(shape.m), 1, t.tm);
  if (uint64_t(shape.n) <= 8) t.tn = 1;
  t.wg = pow2_at_least((uint64_t(shape.n) + t.tn - 1) / t.tn, 8, 64);
  return t;
}

void append_gemm_cpu(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape, const GemmOperand& a,
                     const GemmOperand& b, BufferRef c, const CpuGemmTile& tile,
                     const DotEpilogue* epi) {
  const DeviceCore& core = *impl.core;
  AccType acc = dot_acc_type(out);
  uint32_t sg = shuffle_width(core);
  // Whole subgroups per workgroup.
  uint32_t wg = sg ? std::max(tile.wg, sg) / sg * sg : tile.wg;
  VariantKey variant{.family = uint16_t(FamilyId::dot), .op = kGemmCpu};
  variant.types = {out, a.type, b.type};
  variant.type_count = 3;
  variant.tile = tile.tm | (tile.tn << 8) | (wg << 16);
  variant.layout = uint8_t(sg);
  const Kernel& kernel = *epilogue_kernel(impl, variant, epi, [&] {
    KernelKey key;
    key.name = "gemm_cpu";
    key.workgroup_size = wg;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, a.type, b.type, acc);
    add_gemm_operand_defines(d, a.type, b.type, acc);
    d.emplace_back("TM", std::to_string(tile.tm) + "u");
    d.emplace_back("TN", std::to_string(tile.tn) + "u");
    d.emplace_back("SG", std::to_string(sg));
    if (sg) d.emplace_back("SHUFFLE(v, s)", shuffle(acc));
    append_glsl_use_defines(d);
    return key;
  });
  GemmPush push{};
  push.batch = uint32_t(shape.batch), push.m = uint32_t(shape.m), push.n = uint32_t(shape.n), push.k = uint32_t(shape.k);
  push.sa_batch = uint32_t(a.strides[0]), push.sa_m = uint32_t(a.strides[1]), push.sa_k = uint32_t(a.strides[2]);
  push.sb_batch = uint32_t(b.strides[0]), push.sb_k = uint32_t(b.strides[1]), push.sb_n = uint32_t(b.strides[2]);
  push.splits = 1, push.k_chunk = push.k;
  const auto& max_count = core.info().max_workgroup_count;
  uint64_t cols = uint64_t(wg) * tile.tn;
  std::array<uint32_t, 3> grid{uint32_t(std::min<uint64_t>((uint64_t(shape.n) + cols - 1) / cols, max_count[0])),
                               uint32_t(std::min<uint64_t>((uint64_t(shape.m) + tile.tm - 1) / tile.tm, max_count[1])),
                               uint32_t(std::min<uint64_t>(uint64_t(shape.batch), max_count[2]))};
  launch_gemm_once(builder, kernel, grid, push, a, b, c, epi);
}

}  // namespace nxv
