// dot's tensor-core tiers on fresh random inputs against the host reference (dot_test_util.hpp):
// the KHR cooperative-matrix GEMM (f16/bf16 into f32; s8/u8 into 32-bit integers) and the
// workgroup-scope VK_NV_cooperative_matrix2 one, where the device reports the shapes (skipped,
// saying why, elsewhere: lavapipe has none), and the switches that keep them off.
#include <array>
#include <cstdio>
#include <string>

#include "device/device_impl.hpp"
#include "kernels/glsl_uses.hpp"
#include "kernels/kernel_cache.hpp"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/dot_plan.hpp"
#include "dot_test_util.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// The KHR tier's sweep: for each type triple the device's shapes serve, every case (each that
// is not a matrix-vector shape must take the tier), then two cases on the large tile `tile`
// and two with split-K forced; seeds from `seed`. Returns how many type triples ran.
int sweep_coopmat_tier(Device& dev, const std::vector<DotCase>& cases, const std::vector<TypeCase>& types,
                       uint32_t seed, double eps_acc, const char* tile, std::array<size_t, 2> tiled,
                       std::array<size_t, 2> split) {
  const DeviceCore& core = *dev.impl().core;
  auto takes_tier = [&](const TypeCase& t, const GemmShape& g) {
    GemmOperand a{{}, t.left, {0, 0, 1}}, b{{}, t.right, {0, 0, 1}};
    return g.m > 1 && g.n > 1 && coopmat_gemm_tile(core, g, a, b, t.out).has_value();
  };
  int ran = 0;
  for (const auto& t : types) {
    if (!takes_tier(t, {1, 64, 64, 64})) {
      std::printf("[coopmat] %s x %s -> %s: no cooperative-matrix shape on this device\n",
                  std::string(dtype_name(t.left)).c_str(), std::string(dtype_name(t.right)).c_str(),
                  std::string(dtype_name(t.out)).c_str());
      continue;
    }
    ++ran;
    for (size_t i = 0; i < cases.size(); ++i) {
      GemmShape g = gemm_shape(cases[i].left, cases[i].right, cases[i].attrs);
      if (g.m > 1 && g.n > 1) EXPECT_TRUE(takes_tier(t, g)) << cases[i].name;
      run_case(dev, cases[i], t, seed + uint32_t(i), eps_acc);
    }
    {
      ScopedTuning large("dot.coopmat_tile", tile);
      for (size_t j = 0; j < 2; ++j) run_case(dev, cases[tiled[j]], t, seed + 20 + uint32_t(j), eps_acc);
    }
    ScopedTuning splits("dot.splits", "3");
    for (size_t j = 0; j < 2; ++j) run_case(dev, cases[split[j]], t, seed + 30 + uint32_t(j), eps_acc);
  }
  return ran;
}

// The cooperative-matrix tier (f16 x f16, bf16 x bf16; f32 accumulation) on a device that
// reports the shapes; skipped, saying why, elsewhere (lavapipe has none). Tile edges in every
// direction (primes, sizes straddling 64 and 128), K = 0 and 1, batches, transposed and
// padded operands (the 8-wide and the element-wise reads), both tiles, split-K. Tolerance:
// |got - exact| <= eps_out * |exact| + (K + 2) * 2^-22 * sum_k |a| |b|: products of 16-bit
// floats are exact in f32, and the tensor cores' f32 additions are allowed twice the error of
// rounded ones (some truncate); then one rounding (bf16: truncation) to the output type.
TEST_F(Dot, CooperativeMatrixTier) {
  DotAttrs mm = axes({1}, {}, {0}, {});
  const std::vector<DotCase> cases = {
      {"matmul_1x1x1", {1, 1}, {1, 1}, mm},  // the matrix-vector path: must agree too
      {"matmul_2x1x2", {2, 1}, {1, 2}, mm},
      {"matmul_17x129x33", {17, 129}, {129, 33}, mm},
      {"matmul_255x257x129", {255, 257}, {257, 129}, mm},
      {"matmul_128x64x128", {128, 64}, {64, 128}, mm},
      {"matmul_129x72x127", {129, 72}, {72, 127}, mm},
      {"matmul_aligned_split_k_256x1024x192", {256, 1024}, {1024, 192}, mm},
      {"batched_3x5x7x9", {3, 5, 7}, {3, 7, 9}, axes({2}, {0}, {1}, {0})},
      {"batched_aligned_2x64x96x40", {2, 64, 96}, {2, 96, 40}, axes({2}, {0}, {1}, {0})},
      {"k0_3x0x4", {3, 0}, {0, 4}, mm},
      {"transposed_a_33x20x18", {33, 20}, {20, 18}, mm, kTransposed},
      {"transposed_b_40x31x24", {40, 31}, {31, 24}, mm, kDense, kTransposed},
      {"transposed_both_aligned_64x128x72", {64, 128}, {128, 72}, mm, kTransposed, kTransposed},
      {"padded_rows_a_21x6x36", {21, 6}, {6, 36}, mm, kPaddedRows},
      {"broadcast_a_9x12x10", {9, 12}, {12, 10}, mm, kBroadcast0},
  };
  const std::vector<TypeCase> types = {{DType::F16, DType::F16, DType::F16}, {DType::BF16, DType::BF16, DType::BF16},
                                       {DType::F16, DType::F16, DType::F32}, {DType::BF16, DType::BF16, DType::F32}};
  for (const auto& s : device_->info().cooperative_matrix_shapes)
    std::printf("[coopmat] shape %ux%ux%u %s x %s + %s -> %s (%s)\n", s.m, s.n, s.k, s.a_type.c_str(), s.b_type.c_str(),
                s.c_type.c_str(), s.result_type.c_str(), s.scope.c_str());
  std::printf("[coopmat] coopmat2: %d, bf16 matrices: %d, subgroup %u\n", int(device_->has(kCapCooperativeMatrix2)),
              int(device_->info().features.bfloat16_cooperative_matrix), device_->info().subgroup_size);
  // The large tile on two shapes too small to get it by themselves.
  int ran = sweep_coopmat_tier(*device_, cases, types, sample_seed() + 700, 0x1p-22, "128,128,32,64,32", {3, 12}, {3, 8});
  if (!ran) GTEST_SKIP() << "the device reports no f16 or bf16 cooperative-matrix shape (or the tier is off)";
}

// The tier stays off where it must: CPU drivers, the capability mask, dot.no_coopmat,
// and inputs of other types.
TEST_F(Dot, CooperativeMatrixTierSwitches) {
  GemmShape g{1, 256, 256, 256};
  GemmOperand a{{}, DType::F16, {0, 0, 1}}, b{{}, DType::F16, {0, 0, 1}};
  const DeviceCore& core = *device_->impl().core;
  if (device_->info().type == "cpu") EXPECT_FALSE(coopmat_gemm_tile(core, g, a, b, DType::F16).has_value());
  {
    ScopedTuning off("dot.no_coopmat", "1");
    EXPECT_FALSE(coopmat_gemm_tile(core, g, a, b, DType::F16).has_value());
  }
  GemmOperand f32a{{}, DType::F32, {0, 0, 1}}, f32b{{}, DType::F32, {0, 0, 1}};
  EXPECT_FALSE(coopmat_gemm_tile(core, g, f32a, f32b, DType::F32).has_value());
  EXPECT_FALSE(coopmat_gemm_tile(core, g, a, f32b, DType::F32).has_value());
  auto masked = Device::open({.disabled = kCapCooperativeMatrix});
  EXPECT_FALSE(coopmat_gemm_tile(*masked->impl().core, g, a, b, DType::F16).has_value());
  auto no_bf16 = Device::open({.disabled = kCapBFloat16});
  GemmOperand bfa{{}, DType::BF16, {0, 0, 1}}, bfb{{}, DType::BF16, {0, 0, 1}};
  EXPECT_FALSE(coopmat_gemm_tile(*no_bf16->impl().core, g, bfa, bfb, DType::BF16).has_value());
}

// 8-bit integer inputs into 32-bit integer fragments, bit for bit against Nx's wrapping sums
// (full-range values: every product and sum wraps): s8 and u8 into their own type and into 32
// bits, and into 64 bits while no sum can overflow the accumulator. Tile edges in every
// direction, K = 0 and below a fragment's 32, batches, transposed and padded operands (the
// 16-wide and the element-wise reads), both tiles, split-K.
TEST_F(Dot, CooperativeMatrixInt8Tier) {
  DotAttrs mm = axes({1}, {}, {0}, {});
  const std::vector<DotCase> cases = {
      {"matmul_2x1x2", {2, 1}, {1, 2}, mm},
      {"matmul_17x129x33", {17, 129}, {129, 33}, mm},
      {"matmul_255x257x129", {255, 257}, {257, 129}, mm},
      {"matmul_128x64x128", {128, 64}, {64, 128}, mm},
      {"matmul_aligned_split_k_256x1024x192", {256, 1024}, {1024, 192}, mm},
      {"batched_3x5x7x9", {3, 5, 7}, {3, 7, 9}, axes({2}, {0}, {1}, {0})},
      {"batched_aligned_2x64x96x48", {2, 64, 96}, {2, 96, 48}, axes({2}, {0}, {1}, {0})},
      {"k0_3x0x4", {3, 0}, {0, 4}, mm},
      {"transposed_a_33x20x18", {33, 20}, {20, 18}, mm, kTransposed},
      {"transposed_both_aligned_64x128x80", {64, 128}, {128, 80}, mm, kTransposed, kTransposed},
      {"padded_rows_a_21x6x36", {21, 6}, {6, 36}, mm, kPaddedRows},
  };
  const std::vector<TypeCase> types = {{DType::S8, DType::S8, DType::S8}, {DType::U8, DType::U8, DType::U8},
                                       {DType::S8, DType::S8, DType::S32}, {DType::U8, DType::U8, DType::U32},
                                       {DType::S8, DType::S8, DType::S64}};
  int ran = sweep_coopmat_tier(*device_, cases, types, sample_seed() + 800, 0, "128,128,64,64,32", {2, 9}, {2, 6});
  if (!ran) GTEST_SKIP() << "the device reports no s8 or u8 cooperative-matrix shape (or the tier is off)";
}

// Where 32-bit integer accumulators would not give Nx's sums the tier stays off: 64-bit outputs
// once K products can overflow them, float outputs, and mixed s8 x u8.
TEST_F(Dot, CooperativeMatrixInt8TierLimits) {
  const DeviceCore& core = *device_->impl().core;
  GemmOperand s8{{}, DType::S8, {0, 0, 1}}, u8{{}, DType::U8, {0, 0, 1}};
  EXPECT_FALSE(coopmat_gemm_tile(core, {1, 256, 256, 1 << 17}, s8, s8, DType::S64).has_value());
  EXPECT_FALSE(coopmat_gemm_tile(core, {1, 256, 256, 1 << 17}, u8, u8, DType::U64).has_value());
  EXPECT_FALSE(coopmat_gemm_tile(core, {1, 256, 256, 256}, s8, s8, DType::F32).has_value());
  EXPECT_FALSE(coopmat_gemm_tile(core, {1, 256, 256, 256}, s8, u8, DType::S16).has_value());
  if (device_->info().type == "cpu") EXPECT_FALSE(coopmat_gemm_tile(core, {1, 256, 256, 256}, s8, s8, DType::S32));
}

// The 8-bit kernel as the dot family compiles it (no device needed): signed inputs multiply as
// signed (the MulAdd's operand mask: A, B, C and the result signed), unsigned ones as unsigned.
TEST(DotKernels, TheInt8CooperativeMatrixKernelCompilesWithItsSignedness) {
  for (bool is_signed : {true, false}) {
    for (const char* rows : {"1", "0"}) {
      KernelKey key;
      key.name = "gemm_coopmat";
      key.defines = {{"BM", "64u"},       {"BN", "64u"},      {"BK", "64u"},
                     {"WM", "32u"},       {"WN", "32u"},      {"FM", "16u"},
                     {"FN", "16u"},       {"FK", "32u"},      {"SG", "32u"},
                     {"NSG", "4u"},       {"A_ROW", rows},    {"B_ROW", rows},
                     {"A_VEC", rows},     {"B_VEC", "0"},     {"NXV_STORAGE8", "1"},
                     {"NXV_STORAGE16", "1"}, {"NXV_INT64", "0"}, {"NXV_F64", "0"},
                     {"C_STORE", is_signed ? "int" : "uint"}, {"C_ALIGN", "4"},
                     {"STORE_OUT(v)", is_signed ? "int(v)" : "uint(v)"},
                     {"ELEM8", "1"},      {"FRAG_IN", is_signed ? "int8_t" : "uint8_t"},
                     {"FRAG_ACC", is_signed ? "int" : "uint"}};
      append_glsl_use_defines(key.defines);
      std::vector<uint32_t> w = compile_glsl(key);
      // OpCooperativeMatrixMulAddKHR (4459): result type, id, A, B, C, then the operand mask.
      int muladds = 0;
      for (size_t i = 5; i < w.size(); i += w[i] >> 16) {
        if ((w[i] & 0xffffu) != 4459) continue;
        ++muladds;
        uint32_t mask = (w[i] >> 16) > 6 ? w[i + 6] : 0;
        EXPECT_EQ(mask & 0xfu, is_signed ? 0xfu : 0u) << "rows " << rows;
      }
      EXPECT_GT(muladds, 0);
    }
  }
}

}  // namespace
