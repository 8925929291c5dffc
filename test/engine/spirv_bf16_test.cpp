// The f16 -> bf16 SPIR-V retyping (kernels/spirv_bf16.hpp): on a hand-assembled module, the
// exact words it writes; the modules it must refuse (a 16-bit float used other than as a
// cooperative matrix's component); and on the real GEMM kernel compiled by shaderc (no device
// needed), that the result declares what SPV_KHR_bfloat16 asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/glsl_uses.hpp"
#include "kernels/kernel_cache.hpp"
#include "kernels/spirv_bf16.hpp"
#include "nxv/error.hpp"

namespace nxv {
namespace {

uint32_t op(uint32_t count, uint32_t code) { return count << 16 | code; }

// "SPV_KHR_cooperative_matrix" (26 bytes and its zero: 7 words).
std::vector<uint32_t> str(const char* s) {
  std::vector<uint32_t> w((std::strlen(s) + 4) / 4, 0u);
  std::memcpy(w.data(), s, std::strlen(s));
  return w;
}

// Shader, Float16, CooperativeMatrixKHR; its extension; the memory model; %1 = half,
// %2 = uint, %3 = uint 16, %4 = uint 3 (subgroup), %5 = uint 0 (use A),
// %6 = coopmat<half, subgroup, 16, 16, A>; then `extra` (types or values using %1).
std::vector<uint32_t> module(const std::vector<uint32_t>& extra = {}) {
  std::vector<uint32_t> w{0x07230203u, 0x00010600u, 0u, 100u, 0u};
  w.insert(w.end(), {op(2, 17), 1u, op(2, 17), 9u, op(2, 17), 6022u});
  auto ext = str("SPV_KHR_cooperative_matrix");
  w.push_back(op(uint32_t(1 + ext.size()), 10));
  w.insert(w.end(), ext.begin(), ext.end());
  w.insert(w.end(), {op(3, 14), 0u, 1u});  // Logical GLSL450
  w.insert(w.end(), {op(3, 22), 1u, 16u, op(4, 21), 2u, 32u, 0u, op(4, 43), 2u, 3u, 16u, op(4, 43), 2u, 4u, 3u,
                     op(4, 43), 2u, 5u, 0u, op(7, 4456), 6u, 1u, 4u, 3u, 3u, 5u});
  w.insert(w.end(), extra.begin(), extra.end());
  return w;
}

TEST(SpirvBf16, RetypesTheFloatAndDeclaresTheExtension) {
  std::vector<uint32_t> in = module(), out = spirv_f16_to_bf16(in);
  std::vector<uint32_t> want{0x07230203u, 0x00010600u, 0u, 100u, 0u};
  // Float16 becomes BFloat16TypeKHR; BFloat16CooperativeMatrixKHR and SPV_KHR_bfloat16 follow
  // the last capability.
  want.insert(want.end(), {op(2, 17), 1u, op(2, 17), 5116u, op(2, 17), 6022u, op(2, 17), 5118u});
  auto bf = str("SPV_KHR_bfloat16");
  ASSERT_EQ(bf.size(), 5u);  // 16 characters and the terminating zero, padded
  want.push_back(op(6, 10));
  want.insert(want.end(), bf.begin(), bf.end());
  auto ext = str("SPV_KHR_cooperative_matrix");
  want.push_back(op(uint32_t(1 + ext.size()), 10));
  want.insert(want.end(), ext.begin(), ext.end());
  want.insert(want.end(), {op(3, 14), 0u, 1u});
  // OpTypeFloat 16 with FP Encoding BFloat16KHR (0).
  want.insert(want.end(), {op(4, 22), 1u, 16u, 0u, op(4, 21), 2u, 32u, 0u, op(4, 43), 2u, 3u, 16u, op(4, 43), 2u, 4u,
                           3u, op(4, 43), 2u, 5u, 0u, op(7, 4456), 6u, 1u, 4u, 3u, 3u, 5u});
  EXPECT_EQ(out, want);
}

TEST(SpirvBf16, RefusesOtherUsesOfTheType) {
  // A pointer to it, a vector of it, a constant of it, an OpFAdd in it.
  EXPECT_THROW(spirv_f16_to_bf16(module({op(4, 32), 7u, 12u, 1u})), Error);
  EXPECT_THROW(spirv_f16_to_bf16(module({op(4, 23), 7u, 1u, 2u})), Error);
  EXPECT_THROW(spirv_f16_to_bf16(module({op(4, 43), 1u, 7u, 0x3c00u})), Error);
  EXPECT_THROW(spirv_f16_to_bf16(module({op(5, 129), 1u, 8u, 7u, 7u})), Error);
  // No 16-bit float at all; not SPIR-V.
  std::vector<uint32_t> plain{0x07230203u, 0x00010600u, 0u, 10u, 0u, op(2, 17), 1u, op(3, 14), 0u, 1u};
  EXPECT_THROW(spirv_f16_to_bf16(plain), Error);
  EXPECT_THROW(spirv_f16_to_bf16({1u, 2u, 3u}), Error);
  // Names and decorations of the type are no uses.
  EXPECT_NO_THROW(spirv_f16_to_bf16(module({op(3, 71), 1u, 0u})));
}

// The cooperative-matrix GEMM as the dot family compiles it for bf16 (both tile layouts).
TEST(SpirvBf16, TheGemmKernelRetypes) {
  for (const char* rows : {"1", "0"}) {
    KernelKey key;
    key.name = "gemm_coopmat";
    key.defines = {{"BM", "64u"},    {"BN", "64u"},       {"BK", "32u"},    {"WM", "32u"},      {"WN", "32u"},
                   {"FM", "16u"},    {"FN", "16u"},       {"FK", "16u"},    {"SG", "32u"},      {"NSG", "4u"},
                   {"A_ROW", rows},  {"B_ROW", rows},     {"A_VEC", rows},  {"B_VEC", "0"},     {"NXV_STORAGE8", "0"},
                   {"NXV_STORAGE16", "1"}, {"NXV_INT64", "0"}, {"NXV_F64", "0"}, {"C_STORE", "uint16_t"},
                   {"C_ALIGN", "2"}, {"STORE_OUT(v)", "nxv_bf16_store(float(v))"}, {"NXV_SPIRV_BF16", "1"}};
    append_glsl_use_defines(key.defines);
    std::vector<uint32_t> w = compile_glsl(key);
    auto has = [&](uint32_t count, uint32_t code, uint32_t w1, uint32_t w2) {
      for (size_t i = 5; i < w.size(); i += w[i] >> 16)
        if (w[i] == op(count, code) && w[i + 1] == w1 && (count < 3 || w[i + 2] == w2)) return true;
      return false;
    };
    EXPECT_TRUE(has(2, 17, 5116, 0)) << "BFloat16TypeKHR";
    EXPECT_TRUE(has(2, 17, 5118, 0)) << "BFloat16CooperativeMatrixKHR";
    EXPECT_FALSE(has(2, 17, 9, 0)) << "Float16 left";
    bool bf16_type = false;
    for (size_t i = 5; i < w.size(); i += w[i] >> 16)
      bf16_type |= w[i] >> 16 == 4 && (w[i] & 0xffffu) == 22 && w[i + 2] == 16 && w[i + 3] == 0;
    EXPECT_TRUE(bf16_type) << "OpTypeFloat 16 BFloat16KHR";
  }
}

}  // namespace
}  // namespace nxv
