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
uint32_t shuffle_width(const DeviceInfo& info) {
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

// Rows per workgroup at most for an output of `out` (cpu_gemm_tile's).
uint32_t most_rows(DType out) {
  const uint32_t bytes = acc_bytes(dot_acc_type(out));
  return bytes <= 4 ? 16 : bytes <= 8 ? 8 : 4;
}

// Whole subgroups of `sg` (0: none) per workgroup of at least `wg` invocations.
uint32_t whole_subgroups(uint32_t wg, uint32_t sg) { return sg ? std::max(wg, sg) / sg * sg : wg; }

// A variant of gemm_cpu.comp: the types, TM rows per workgroup, TN columns per invocation, WG
// invocations, A's loads shared across subgroups of SG (0: none).
struct GemmCpuVariant {
  static constexpr const char* kTemplate = "gemm_cpu";
  DType out = DType::F32, a = DType::F32, b = DType::F32;
  uint32_t tm = 16, tn = 1, wg = 64, sg = 0;

  auto fields() const { return std::tie(out, a, b, tm, tn, wg, sg); }

  KernelKey source() const {
    AccType acc = dot_acc_type(out);
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = wg;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, a, b, acc);
    add_gemm_operand_defines(d, a, b, acc);
    d.emplace_back("TM", std::to_string(tm) + "u");
    d.emplace_back("TN", std::to_string(tn) + "u");
    d.emplace_back("SG", std::to_string(sg));
    if (sg) d.emplace_back("SHUFFLE(v, s)", shuffle(acc));
    append_glsl_use_defines(d);
    return key;
  }

  // Every type in each tile cpu_gemm_tile picks by size: rows from the type's most down to 2
  // (M == 1 takes other kernels), two columns per invocation in 8 to 64 invocations, or one
  // in 8 (N <= 8); with this device's subgroups.
  static std::vector<GemmCpuVariant> declared(const DeviceInfo& info) {
    uint32_t sg = shuffle_width(info);
    std::vector<GemmCpuVariant> all;
    for (DType t : kAllDTypes)
      for (uint32_t tm = most_rows(t); tm >= 2; tm /= 2)
        for (auto [tn, wg] : {std::pair{2u, 64u}, {2u, 32u}, {2u, 16u}, {2u, 8u}, {1u, 8u}})
          all.push_back({t, t, t, tm, tn, whole_subgroups(wg, sg), sg});
    return all;
  }
};

}  // namespace

std::optional<CpuGemmTile> cpu_gemm_tile(const DeviceCore& core, const GemmShape& shape, DType out) {
  if (tuning().dot.no_cpu_gemm || !gemm_cpu_paths(core)) return std::nullopt;
  if (auto forced = tuned_tile()) return forced;
  // 16 x 2 was the fastest of 8-32 rows by 1-2 columns at 511^3 f32 on lavapipe (see
  // bench/RESULTS.md); half the rows per 8-byte accumulator, a quarter per 16-byte one.
  CpuGemmTile t;
  t.tm = most_rows(out);
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
  uint32_t sg = shuffle_width(core.info());
  uint32_t wg = whole_subgroups(tile.wg, sg);
  const Kernel& kernel = *epilogue_kernel(impl.kernels, GemmCpuVariant{out, a.type, b.type, tile.tm, tile.tn, wg, sg}, epi);
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

void declare_gemm_cpu_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<GemmCpuVariant>(out, info);
}

}  // namespace nxv
