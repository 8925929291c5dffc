#include "ops/dot/dot_rows.hpp"

#include <algorithm>
#include <tuple>

#include "common/tuning.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/dot/dot_epilogue.hpp"
#include "ops/dot/gemm_push.h"
#include "ops/reduce/folds.hpp"

namespace nxv {

bool rows_kernel_fits(const DeviceCore& core, const GemmShape& s, const GemmOperand& b, DType out) {
  AccType acc = dot_acc_type(out);
  bool off = tuning().dot.no_rows;
  uint64_t offset = b.ref.byte_offset / dtype_size(b.type);
  return gemm_cpu_paths(core) && !off && !gemm_acc4_type(acc).empty() && !glsl_vec4_type(b.type).empty() &&
         b.type != DType::F8 && b.type != DType::F8E4M3FN && b.strides[2] == 1 && s.n >= 4 && s.n % 4 == 0 &&
         b.strides[1] % 4 == 0 && b.strides[0] % 4 == 0 && offset % 4 == 0;
}

namespace {

// A variant of gemm_rows.comp: TM rows per workgroup, 4 * TN4 columns per invocation, WG
// invocations; A read four-wide along k or not, 32-bit operands read as 64-bit pairs or not.
struct GemmRowsVariant {
  static constexpr const char* kTemplate = "gemm_rows";
  DType out = DType::F32, a = DType::F32, b = DType::F32;
  uint32_t tm = 16, tn4 = 4, wg = 64;
  bool a_vec4 = false, a_wide = false, b_wide = false;

  auto fields() const { return std::tie(out, a, b, tm, tn4, wg, a_vec4, a_wide, b_wide); }

  KernelKey source() const {
    AccType acc = dot_acc_type(out);
    std::string acc4 = gemm_acc4_type(acc);
    // The four 32-bit values of a u64vec2 q, as the type's vector, then the accumulators'.
    auto unpack = [&](DType t) {
      std::string bits = "uvec4(unpackUint2x32(q.x), unpackUint2x32(q.y))";
      std::string v = t == DType::F32 ? "uintBitsToFloat(" + bits + ")" : glsl_vec4_type(t) + "(" + bits + ")";
      return acc4 + "(" + v + ")";
    };
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = wg;
    auto& d = key.defines;
    add_gemm_common_defines(d, out, a, b, acc);
    d.emplace_back("TM", std::to_string(tm) + "u");
    d.emplace_back("TN4", std::to_string(tn4) + "u");
    d.emplace_back("ACC4", acc4);
    d.emplace_back("ZERO4", acc4 + "(0)");
    bool floating = is_floating(acc);
    d.emplace_back("MAC4(acc, a, b)", floating ? "fma(" + acc4 + "(a), b, acc)" : "((acc) + (a) * (b))");
    add_buffer_defines(d, "A", a);
    add_buffer_defines(d, "B", b);
    d.emplace_back("WIDE_LOADS", a_wide || b_wide ? "1" : "0");
    d.emplace_back("B_VEC", b_wide ? "u64vec2" : glsl_vec4_type(b));
    d.emplace_back("B_VALIGN", std::to_string(vec4_alignment(b)));
    d.emplace_back("LOAD_A(x)", glsl_load(a, acc));
    d.emplace_back("A_VEC4", a_vec4 ? "1" : "0");
    if (a_vec4) {
      d.emplace_back("A_VEC", a_wide ? "u64vec2" : glsl_vec4_type(a));
      d.emplace_back("A_VALIGN", std::to_string(vec4_alignment(a)));
      d.emplace_back("LOAD_A4(q)", a_wide ? unpack(a) : gemm_load4(a, acc4));
    }
    // (The parameter is not `x`: the swizzles name x.)
    d.emplace_back("LOAD_B4(q)", b_wide ? unpack(b) : gemm_load4(b, acc4));
    append_glsl_use_defines(d);
    return key;
  }

  // Every type whose B loads four-wide: a large product's tile and a vector times a matrix's
  // (M == 1), each by the columns' workgroup sizes at both ends; f32 in every size the lowering
  // picks. A read four-wide or not; 32-bit types as 64-bit pairs where the device has int64.
  static std::vector<GemmRowsVariant> declared(const DeviceInfo& info) {
    struct Shape3 {
      uint32_t tm, tn4, wg;
    };
    std::vector<Shape3> few{{16, 4, 64}, {16, 4, 8}, {1, 4, 64}, {1, 4, 8}}, every;
    for (uint32_t tm : {16u, 8u, 4u, 3u, 2u, 1u})
      for (auto [tn4, wg] : {std::pair{4u, 64u}, {4u, 32u}, {4u, 16u}, {4u, 8u}, {2u, 8u}, {1u, 8u}})
        every.push_back({tm, tn4, wg});
    bool wide = info.features.int64;
    std::vector<GemmRowsVariant> all;
    for (DType t : kAllDTypes) {
      if (gemm_acc4_type(dot_acc_type(t)).empty() || !gemm_vec4_loadable(t)) continue;
      for (const Shape3& s : t == DType::F32 ? every : few)
        for (bool a_vec4 : {true, false}) {
          bool w = wide && dtype_size(t) == 4;
          all.push_back({t, t, t, s.tm, s.tn4, s.wg, a_vec4, a_vec4 && w, w});
        }
    }
    return all;
  }
};

}  // namespace

void append_gemm_rows(DeviceImpl& impl, LaunchBuilder& builder, DType out, const GemmShape& shape,
                      const GemmOperand& a, const GemmOperand& b, BufferRef c, const DotEpilogue* epi) {
  const DeviceCore& core = *impl.core;
  // TM rows per workgroup, 4 * TN4 columns per invocation; as many invocations (8 to 64) as
  // the columns need. 16 x 16 was the fastest on lavapipe at 512^3 on a quiet machine
  // (7.6-7.9 ms; 16 x 8: 8.9, 32 x 16: 8.3, 16 x 32: 7.8, 8 x 16: 11.7).
  // Tuning's dot.rows=tm,tn4 overrides. A vector times a matrix (M == 1) is memory bound: 16 columns per invocation, so that
  // the 8 lanes llvmpipe runs together read 512 contiguous bytes of each row of B.
  uint32_t tm = uint32_t(std::min<int64_t>(shape.m >= 16 ? 16 : shape.m >= 8 ? 8 : shape.m >= 4 ? 4 : shape.m, 16));
  uint32_t tn4 = shape.n >= 16 || shape.m == 1 ? 4 : shape.n >= 8 ? 2 : 1;
  if (const auto& rows = tuning().dot.rows) {
    auto [x, y] = *rows;
    if (x >= 1 && x <= 32 && y >= 1 && y <= 8) tm = x, tn4 = y;
  }
  uint64_t lanes = (uint64_t(shape.n) + 4 * tn4 - 1) / (4 * tn4);
  uint32_t wg = 8;
  while (wg < 64 && wg < lanes) wg *= 2;
  // A read four-wide along k where its rows start 4-aligned (tuning's dot.no_vec4 turns it off).
  uint64_t a_offset = a.ref.byte_offset / dtype_size(a.type);
  bool a_vec4 = a.strides[2] == 1 && a.strides[1] % 4 == 0 && a.strides[0] % 4 == 0 && a_offset % 4 == 0 &&
                !glsl_vec4_type(a.type).empty() && a.type != DType::F8 && a.type != DType::F8E4M3FN &&
                !tuning().dot.no_vec4;
  // 32-bit operands read as 64-bit pairs (llvmpipe gathers per component; dot.no_wide turns
  // it off).
  bool wide = core.info().features.int64 && !tuning().dot.no_wide;
  GemmRowsVariant variant{.out = out, .a = a.type, .b = b.type, .tm = tm, .tn4 = tn4, .wg = wg, .a_vec4 = a_vec4};
  variant.a_wide = a_vec4 && wide && dtype_size(a.type) == 4;
  variant.b_wide = wide && dtype_size(b.type) == 4;
  const Kernel& kernel = *epilogue_kernel(impl.kernels, variant, epi);
  GemmPush push{};
  push.batch = uint32_t(shape.batch), push.m = uint32_t(shape.m), push.n = uint32_t(shape.n), push.k = uint32_t(shape.k);
  push.sa_batch = uint32_t(a.strides[0]), push.sa_m = uint32_t(a.strides[1]), push.sa_k = uint32_t(a.strides[2]);
  push.sb_batch = uint32_t(b.strides[0]), push.sb_k = uint32_t(b.strides[1]), push.sb_n = 1;
  const auto& max_count = core.info().max_workgroup_count;
  uint64_t per_group = uint64_t(wg) * 4 * tn4;
  std::array<uint32_t, 3> grid{
      uint32_t(std::min<uint64_t>((uint64_t(shape.n) + per_group - 1) / per_group, max_count[0])),
      uint32_t(std::min<uint64_t>((uint64_t(shape.m) + tm - 1) / tm, max_count[1])),
      uint32_t(std::min<uint64_t>(uint64_t(shape.batch), max_count[2]))};
  launch_gemm_once(builder, kernel, grid, push, a, b, c, epi);
}


void declare_gemm_rows_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<GemmRowsVariant>(out, info);
}

}  // namespace nxv
