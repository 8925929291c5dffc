// Typed kernel variants (kernels/kernel_variant.hpp): every template's declared variants have
// keys that say everything their sources depend on, and each compiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "device/device_impl.hpp"
#include "kernels/kernel_cache.hpp"
#include "ops/family.hpp"
#include "test_util.hpp"

using namespace nxv;
using nxv::test::shared_device;

namespace {

std::string text_of(const KernelKey& k) {
  std::string t = k.name;
  for (const auto& [d, v] : k.defines) t += "|" + d + "=" + v;
  for (uint32_t v : {k.workgroup_size, k.workgroup_y, k.workgroup_z, k.shared_bytes, k.required_subgroup_size,
                     k.max_workgroups})
    t += "|" + std::to_string(v);
  return t + "|" + k.generated;
}

// Templates whose kernels are generated per graph (a loop body, a fused chain's epilogue):
// their tests build them from graphs.
const std::set<std::string> kGeneratedOnly = {"loop_kernel", "elementwise_wide"};

}  // namespace

TEST(KernelVariants, EqualKeysMeanEqualSources) {
  auto dev = shared_device();
  auto declared = declared_kernel_variants(dev->info());
  ASSERT_FALSE(declared.empty());
  std::map<std::string, std::string> source_of_key;
  for (const auto& v : declared) {
    std::string text = text_of(v.source());
    auto [it, fresh] = source_of_key.emplace(v.key, text);
    EXPECT_TRUE(fresh || it->second == text)
        << "two variants of " << v.template_name << " share a key but not a source:\n"
        << it->second << "\n" << text;
  }
}

TEST(KernelVariants, EveryTemplateDeclaresItsVariants) {
  auto dev = shared_device();
  std::set<std::string> declared_templates;
  for (const auto& v : declared_kernel_variants(dev->info())) declared_templates.insert(v.template_name);
  bool coopmat = dev->info().features.cooperative_matrix;
  for (const std::string& name : engine_kernel_template_names()) {
    if (kGeneratedOnly.count(name)) continue;
    if (name == "gemm_coopmat" && !coopmat) continue;  // tensor-core kernels: none without them
    EXPECT_TRUE(declared_templates.count(name)) << "kernel template " << name << " declares no variants";
  }
}

// Every declared variant to SPIR-V with this device's switches. A sample by default (CI): every
// template's first, last and a stride through the rest; NXV_TEST_ALL_VARIANTS=1 compiles all.
TEST(KernelVariants, DeclaredVariantsCompile) {
  auto dev = shared_device();
  auto& cache = dev->impl().kernels;
  auto declared = declared_kernel_variants(dev->info());
  bool all = std::getenv("NXV_TEST_ALL_VARIANTS") != nullptr;
  std::map<std::string, std::vector<const DeclaredVariant*>> by_template;
  for (const auto& v : declared) by_template[v.template_name].push_back(&v);
  size_t compiled = 0;
  for (const auto& [name, variants] : by_template) {
    size_t stride = all ? 1 : std::max<size_t>(1, variants.size() / 6);
    std::set<std::string> seen;
    for (size_t i = 0; i < variants.size(); ++i) {
      if (i % stride != 0 && i + 1 != variants.size()) continue;
      KernelKey key = cache.for_device(variants[i]->source());
      if (!seen.insert(text_of(key)).second) continue;
      try {
        EXPECT_FALSE(compile_glsl(key).empty());
        ++compiled;
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " variant " << i << " of " << variants.size() << ": " << e.what();
      }
    }
  }
  std::cout << "[ info ] " << declared.size() << " declared variants of " << by_template.size()
            << " templates, " << compiled << " compiled\n";
}
