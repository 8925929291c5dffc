// Device features the next op families need (cooperative matrices, bfloat16, subgroup size
// control): has() must agree with what the logical device enabled, masks must turn features off
// in both, and a cooperative-matrix kernel must run where the device offers one.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "device/device_impl.hpp"
#include "exec/stream.hpp"
#include "kernels/kernel_cache.hpp"
#include "test_util.hpp"

namespace nxv {
namespace {

uint32_t env_mask() {
  const char* v = std::getenv("NX_VULKAN_DISABLE");
  return v ? parse_capability_mask(v) : 0;
}

// What the physical device behind `dev` offers, before any mask.
DeviceInfo physical_info(const Device& dev) { return list_devices()[dev.info().index]; }

bool enabled(Device& dev, const std::string& extension) {
  const auto& e = dev.impl().core->enabled_extensions();
  return std::find(e.begin(), e.end(), extension) != e.end();
}

bool shape_uses(const CooperativeMatrixShape& s, const std::string& type) {
  return s.a_type == type || s.b_type == type || s.c_type == type || s.result_type == type;
}

TEST(DeviceFeatures, ParsesTheNewSwitches) {
  EXPECT_EQ(parse_capability_mask("coopmat2"), uint32_t(kCapCooperativeMatrix2));
  EXPECT_EQ(parse_capability_mask("cooperative_matrix2"), uint32_t(kCapCooperativeMatrix2));
  EXPECT_EQ(parse_capability_mask("subgroup_size"), uint32_t(kCapSubgroupSizeControl));
  EXPECT_EQ(parse_capability_mask(" coopmat , subgroup_size "), uint32_t(kCapCooperativeMatrix | kCapSubgroupSizeControl));
  EXPECT_EQ(parse_capability_mask("all"), kAllCapabilities);
  EXPECT_NE(parse_capability_mask("all") & kCapSubgroupSizeControl, 0u);
  EXPECT_THROW(parse_capability_mask("coopmat3"), Error);
}

TEST(DeviceFeatures, HasAgreesWithTheEnabledExtensions) {
  auto dev = Device::open();
  const auto& ft = dev->info().features;
  EXPECT_EQ(dev->has(kCapCooperativeMatrix), enabled(*dev, "VK_KHR_cooperative_matrix"));
  EXPECT_EQ(dev->has(kCapCooperativeMatrix2), enabled(*dev, "VK_NV_cooperative_matrix2"));
  EXPECT_EQ(dev->has(kCapBFloat16), enabled(*dev, "VK_KHR_shader_bfloat16"));
  EXPECT_EQ(dev->has(kCapCooperativeMatrix), ft.cooperative_matrix);
  EXPECT_EQ(dev->has(kCapCooperativeMatrix2), ft.cooperative_matrix2);
  EXPECT_EQ(dev->has(kCapSubgroupSizeControl), ft.subgroup_size_control);
  if (!dev->has(kCapCooperativeMatrix)) {
    EXPECT_TRUE(dev->info().cooperative_matrix_shapes.empty());
    EXPECT_FALSE(dev->has(kCapCooperativeMatrix2));
    EXPECT_FALSE(ft.bfloat16_cooperative_matrix);
  }
  // Unmasked, the device reports what the driver offers.
  const auto phys = physical_info(*dev);
  const uint32_t env = env_mask();
  if (!(env & (kCapCooperativeMatrix | kCapCooperativeMatrix2))) {
    EXPECT_EQ(dev->has(kCapCooperativeMatrix), phys.features.cooperative_matrix);
    EXPECT_EQ(dev->has(kCapCooperativeMatrix2), phys.features.cooperative_matrix2);
  }
  if (!(env & kCapBFloat16)) EXPECT_EQ(dev->has(kCapBFloat16), phys.features.bfloat16);
  if (!(env & kCapSubgroupSizeControl)) {
    EXPECT_EQ(dev->has(kCapSubgroupSizeControl), phys.features.subgroup_size_control);
    EXPECT_EQ(ft.compute_full_subgroups, phys.features.compute_full_subgroups);
  }
  // Every shape offered uses types the logical device enabled.
  for (const auto& s : dev->info().cooperative_matrix_shapes) {
    if (shape_uses(s, "f16")) EXPECT_TRUE(ft.float16);
    if (shape_uses(s, "bf16")) EXPECT_TRUE(ft.bfloat16_cooperative_matrix);
    if (shape_uses(s, "f64")) EXPECT_TRUE(ft.float64);
  }
}

TEST(DeviceFeatures, MaskedCooperativeMatrixIsNeitherReportedNorEnabled) {
  auto dev = Device::open({.disabled = kCapCooperativeMatrix});
  EXPECT_FALSE(dev->has(kCapCooperativeMatrix));
  EXPECT_FALSE(dev->has(kCapCooperativeMatrix2));  // coopmat turns coopmat2 off too
  EXPECT_FALSE(dev->info().features.cooperative_matrix);
  EXPECT_FALSE(dev->info().features.cooperative_matrix2);
  EXPECT_FALSE(dev->info().features.bfloat16_cooperative_matrix);
  EXPECT_TRUE(dev->info().cooperative_matrix_shapes.empty());
  EXPECT_FALSE(enabled(*dev, "VK_KHR_cooperative_matrix"));
  EXPECT_FALSE(enabled(*dev, "VK_NV_cooperative_matrix2"));
}

TEST(DeviceFeatures, MaskedCooperativeMatrix2KeepsCooperativeMatrix) {
  auto dev = Device::open({.disabled = kCapCooperativeMatrix2});
  EXPECT_FALSE(dev->has(kCapCooperativeMatrix2));
  EXPECT_FALSE(enabled(*dev, "VK_NV_cooperative_matrix2"));
  if (!(env_mask() & kCapCooperativeMatrix))
    EXPECT_EQ(dev->has(kCapCooperativeMatrix), physical_info(*dev).features.cooperative_matrix);
}

TEST(DeviceFeatures, MaskedTypesDropTheirShapesAndExtensions) {
  auto dev = Device::open({.disabled = kCapFloat16 | kCapBFloat16});
  EXPECT_FALSE(dev->has(kCapBFloat16));
  EXPECT_FALSE(enabled(*dev, "VK_KHR_shader_bfloat16"));
  for (const auto& s : dev->info().cooperative_matrix_shapes) {
    EXPECT_FALSE(shape_uses(s, "f16")) << s.m << "x" << s.n << "x" << s.k;
    EXPECT_FALSE(shape_uses(s, "bf16")) << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(DeviceFeatures, SubgroupSizesAndTheirControl) {
  for (const auto& d : list_devices()) {
    EXPECT_GT(d.min_subgroup_size, 0u) << d.name;
    EXPECT_LE(d.min_subgroup_size, d.subgroup_size) << d.name;
    EXPECT_LE(d.subgroup_size, d.max_subgroup_size) << d.name;
    // Size control is only claimed where compute pipelines may require a size.
    if (d.features.subgroup_size_control) EXPECT_NE(d.required_subgroup_size_stages & 0x20u, 0u) << d.name;
  }
  auto masked = Device::open({.disabled = kCapSubgroupSizeControl});
  EXPECT_FALSE(masked->has(kCapSubgroupSizeControl));
  EXPECT_FALSE(masked->info().features.subgroup_size_control);
  EXPECT_FALSE(masked->info().features.compute_full_subgroups);
  EXPECT_GT(masked->info().max_subgroup_size, 0u);  // the sizes are facts, not features
}

// --- A cooperative-matrix kernel -------------------------------------------------------------

// The first type combination coopmat_probe.comp supports, most wanted first; within it 16x16x16,
// else the smallest shape.
std::optional<CooperativeMatrixShape> pick_shape(const std::vector<CooperativeMatrixShape>& shapes) {
  const std::array<std::array<const char*, 3>, 3> preferred = {
      {{"f16", "f16", "f32"}, {"f16", "f16", "f16"}, {"f32", "f32", "f32"}}};
  auto rank = [](const CooperativeMatrixShape& s) {
    return std::pair(!(s.m == 16 && s.n == 16 && s.k == 16), s.m * s.n * s.k);
  };
  for (const auto& [a, b, c] : preferred) {
    std::optional<CooperativeMatrixShape> best;
    for (const auto& s : shapes)
      if (s.scope == "subgroup" && s.a_type == a && s.b_type == b && s.c_type == c && s.result_type == c &&
          (!best || rank(s) < rank(*best)))
        best = s;
    if (best) return best;
  }
  return std::nullopt;
}

std::string describe(const std::vector<CooperativeMatrixShape>& shapes) {
  std::string out;
  for (const auto& s : shapes)
    out += " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + ":" + s.a_type + "*" +
           s.b_type + "+" + s.c_type + "->" + s.result_type + "/" + s.scope;
  return out.empty() ? " (none)" : out;
}

std::string glsl_type(const std::string& t) { return t == "f16" ? "float16_t" : "float"; }

KernelKey probe_key(const CooperativeMatrixShape& s, uint32_t workgroup) {
  bool f16 = s.a_type == "f16" || s.b_type == "f16" || s.c_type == "f16";
  return KernelKey{"coopmat_probe",
                   {{"M", std::to_string(s.m)},
                    {"N", std::to_string(s.n)},
                    {"K", std::to_string(s.k)},
                    {"A_TYPE", glsl_type(s.a_type)},
                    {"B_TYPE", glsl_type(s.b_type)},
                    {"C_TYPE", glsl_type(s.c_type)},
                    {"NXV_F16", f16 ? "1" : "0"}},
                   workgroup};
}

// The probe compiles for every type combination it supports, with or without such a device.
TEST(DeviceFeatures, CooperativeMatrixProbeCompiles) {
  for (const char* c : {"f32", "f16"}) {
    CooperativeMatrixShape s{16, 16, 16, "f16", "f16", c, c, "subgroup"};
    EXPECT_FALSE(compile_glsl(probe_key(s, 32)).empty()) << c;
  }
  CooperativeMatrixShape s{16, 16, 8, "f32", "f32", "f32", "f32", "subgroup"};
  EXPECT_FALSE(compile_glsl(probe_key(s, 32)).empty());
}

Tensor upload_as(Device& dev, const std::string& type, int64_t rows, int64_t cols, const std::vector<float>& v) {
  if (type == "f32") return test::upload(dev, DType::F32, {rows, cols}, v);
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = test::f32_to_f16_bits(v[i]);
  return test::upload(dev, DType::F16, {rows, cols}, bits);
}

std::vector<float> download_as(Device& dev, const std::string& type, const Tensor& t) {
  if (type == "f32") return test::download<float>(dev, t);
  std::vector<float> out;
  for (uint16_t b : test::download<uint16_t>(dev, t)) out.push_back(test::f16_bits_to_f32(b));
  return out;
}

TEST(DeviceFeatures, CooperativeMatrixKernelRuns) {
  auto dev = test::shared_device();
  const auto& info = dev->info();
  if (!dev->has(kCapCooperativeMatrix)) {
    const auto phys = physical_info(*dev);
    GTEST_SKIP() << "device '" << info.name << "' has no cooperative matrices: "
                 << (phys.features.cooperative_matrix ? "masked by NX_VULKAN_DISABLE"
                                                      : "the driver does not offer VK_KHR_cooperative_matrix "
                                                        "(with a shape, in compute shaders)");
  }
  auto shape = pick_shape(info.cooperative_matrix_shapes);
  if (!shape)
    GTEST_SKIP() << "no subgroup-scope f16*f16+f32, f16*f16+f16 or f32*f32+f32 shape the probe supports among:"
                 << describe(info.cooperative_matrix_shapes);
  const auto& s = *shape;
  bool f16 = shape_uses(s, "f16");
  if (f16 && !(info.features.storage16 && info.features.float16))
    GTEST_SKIP() << "f16 shape " << describe({s}) << " needs 16-bit storage and float16";
  // The shapes are for the default subgroup size; with a range of sizes the pipeline would have
  // to require one (VkPipelineShaderStageRequiredSubgroupSizeCreateInfo), which the kernel cache
  // does not plumb yet.
  if (info.min_subgroup_size != info.max_subgroup_size)
    GTEST_SKIP() << "subgroup size varies (" << info.min_subgroup_size << ".." << info.max_subgroup_size
                 << "); the probe would need a required subgroup size";

  // Small integers: every product and sum is exact in f16 and f32, so the result must be exact.
  const int64_t M = s.m, N = s.n, K = s.k;
  ASSERT_LE(4 * K + 8, 2048) << "K too large for exact f16 sums";
  std::vector<float> a(M * K), b(K * N), c(M * N), want(M * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = float(int((i * 7 + 3) % 5) - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = float(int((i * 11 + 1) % 5) - 2);
  for (int64_t i = 0; i < M * N; ++i) c[i] = float(int((i * 13 + 5) % 17) - 8);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = c[i * N + j];
      for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[k * N + j];
      want[i * N + j] = acc;
    }

  Tensor ta = upload_as(*dev, s.a_type, M, K, a);
  Tensor tb = upload_as(*dev, s.b_type, K, N, b);
  Tensor tc = upload_as(*dev, s.c_type, M, N, c);
  Tensor tr = empty(*dev, s.c_type == "f16" ? DType::F16 : DType::F32, {M, N});

  auto& impl = dev->impl();
  // One workgroup of exactly one subgroup: a subgroup-scope matrix belongs to one subgroup.
  const Kernel& kernel = impl.kernels.get(probe_key(s, info.subgroup_size));
  struct Push {
    uint64_t a, b, c, r;
  } push{ta.buffer->address_at(0), tb.buffer->address_at(0), tc.buffer->address_at(0), tr.buffer->address_at(0)};
  vk::PipelineLayout layout = impl.kernels.layout();
  impl.stream.record([&](Recorder& rec) {
    rec.use(ta.buffer, Access::Read);
    rec.use(tb.buffer, Access::Read);
    rec.use(tc.buffer, Access::Read);
    rec.use(tr.buffer, Access::Write);
    const auto& cmd = rec.cmd();
    cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
    cmd.pushConstants<Push>(layout, vk::ShaderStageFlagBits::eCompute, 0, push);
    cmd.dispatch(1, 1, 1);
    rec.count_command();
  });
  auto got = download_as(*dev, s.c_type, tr);
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (int64_t i = 0; i < M * N; ++i)
    if (got[i] != want[i] && ++bad <= 8)
      ADD_FAILURE() << "R[" << i / N << "," << i % N << "] = " << got[i] << ", want " << want[i];
  EXPECT_EQ(bad, 0) << "shape" << describe({s});
  std::cout << "[coopmat] ran" << describe({s}) << " with a workgroup of " << info.subgroup_size << "\n";
}

}  // namespace
}  // namespace nxv
