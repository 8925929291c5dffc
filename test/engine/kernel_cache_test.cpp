// Kernel templates and caches: every template compiles for every type it claims; SPIR-V is
// found on disk by a new device and by another process.
#include <unistd.h>

#include <cstdio>

#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <thread>

#include "device/device_impl.hpp"
#include "kernels/kernel_cache.hpp"
#include "nxv/ops.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

std::filesystem::path fresh_cache_dir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / (std::string("nxv-cache-") + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace

// Output/input typings Nx can hand an op: inputs of one type with the output in that type, in
// u8 (predicates), in a float type (divide, exp, ...) or a real type (abs/real/imag of
// complex); as_type and bitcast take any pair. Each arity is tried; supports_op decides.
TEST(Kernels, EveryElementwiseOpCompilesForEveryTypeItClaims) {
  auto dev = shared_device();
  struct Case {
    std::string op;
    DType out;
    std::vector<DType> in;
  };
  std::vector<Case> claimed;
  for (const auto& op : native_op_names()) {
    for (DType in : kAllDTypes) {
      for (DType out : kAllDTypes) {
        bool any_pair = op == "as_type" || op == "bitcast";
        bool plausible = out == in || out == DType::U8 || is_float(out) || (is_complex(in) && is_float(out));
        if (!any_pair && !plausible) continue;
        if (op == "bitcast" && dtype_size(in) != dtype_size(out)) continue;
        for (size_t arity = 1; arity <= 3; ++arity) {
          std::vector<DType> ins(arity, in);
          if (op == "select" && arity == 3) ins[0] = DType::U8;
          if (supports_op(*dev, op, {out, {3}}, ins)) claimed.push_back({op, out, ins});
        }
      }
    }
  }
  EXPECT_GT(claimed.size(), 500u);
  // Compiling all of them takes lavapipe most of an hour on two cores: a sample per run.
  auto cases = sample_cases(claimed, 48);
  for (const auto& c : cases) {
    std::vector<Tensor> tensors;
    for (DType t : c.in) tensors.push_back(empty(*dev, t, {3}));
    EXPECT_NO_THROW(run_op(*dev, c.op, {c.out, {3}}, tensors))
        << c.op << " " << dtype_name(c.in.back()) << " x" << c.in.size() << " -> " << dtype_name(c.out);
  }
  dev->synchronize();
  std::printf("compiled and ran %zu of the %zu (op, typing) kernels claimed\n", cases.size(), claimed.size());
}

TEST(Kernels, SpirvIsReusedFromDiskByANewDeviceAndAnotherProcess) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  if (std::getenv("NXV_CACHE_CHILD")) {
    // Child process: the parent's cache directory must already hold this kernel.
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
    auto r = download<float>(*dev, run_op(*dev, "subtract", {DType::F32, {4}}, {t, t}));
    EXPECT_EQ(r[3], 0.f);
    auto s = dev->impl().kernels.stats();
    EXPECT_EQ(s.compiled, 0u);
    EXPECT_GE(s.disk_hits, 1u);
    return;
  }
  auto dir = fresh_cache_dir("spirv");
  ScopedSettings cache([&](Settings& s) { s.cache_dir = dir.string(); });
  {
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
    download<float>(*dev, run_op(*dev, "subtract", {DType::F32, {4}}, {t, t}));
    EXPECT_GE(dev->impl().kernels.stats().compiled, 1u);
  }
  EXPECT_FALSE(std::filesystem::is_empty(dir / "spirv"));
  bool has_pipeline_cache = false;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with("pipelines-")) has_pipeline_cache = true;
  EXPECT_TRUE(has_pipeline_cache);
  {
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
    download<float>(*dev, run_op(*dev, "subtract", {DType::F32, {4}}, {t, t}));
    EXPECT_EQ(dev->impl().kernels.stats().compiled, 0u);
    EXPECT_GE(dev->impl().kernels.stats().disk_hits, 1u);
  }
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = "NX_VULKAN_CACHE_DIR='" + dir.string() + "' NXV_CACHE_CHILD=1 '" + self +
                    "' --gtest_filter=Kernels.SpirvIsReusedFromDiskByANewDeviceAndAnotherProcess > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  // A corrupt entry is ignored and rewritten, never trusted.
  for (auto& e : std::filesystem::directory_iterator(dir / "spirv")) std::filesystem::resize_file(e.path(), 20);
  {
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
    EXPECT_EQ(download<float>(*dev, run_op(*dev, "subtract", {DType::F32, {4}}, {t, t}))[0], 0.f);
    EXPECT_GE(dev->impl().kernels.stats().compiled, 1u);
  }
  std::filesystem::remove_all(dir);
}

TEST(Kernels, ShadercErrorsKeepTheCompilerMessage) {
  KernelKey key{"elementwise", {{"NIN", "1"}, {"LINEAR", "1"}}, 256};
  try {
    compile_glsl(key);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("elementwise"), std::string::npos);
  }
}

namespace {

size_t pipeline_files(const std::filesystem::path& dir, uintmax_t* bytes = nullptr) {
  size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with("pipelines-") && e.path().extension() == ".bin") {
      ++n;
      if (bytes) *bytes = e.file_size();
    }
  return n;
}

void run_negate(Device& dev) {
  auto t = upload(dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(download<float>(dev, run_op(dev, "negate", {DType::F32, {4}}, {t}))[3], -4.f);
}

}  // namespace

// The pipeline cache reaches the disk after a batch of new pipelines, without the device
// closing (under the BEAM devices live as long as the VM), and the next device starts from it.
TEST(Kernels, PipelineCacheIsSavedAfterABatchAndLoadedByTheNextDevice) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  if (std::getenv("NXV_PIPELINE_CHILD")) {
    auto dev = Device::open();
    auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, -2, 3, -4});
    EXPECT_EQ(download<float>(*dev, run_op(*dev, "abs", {DType::F32, {4}}, {t}))[3], 4.f);
    return;  // the device's destructor saves, merging with what the parent wrote
  }
  auto dir = fresh_cache_dir("pipelines");
  ScopedSettings cache([&](Settings& s) {
    s.cache_dir = dir.string();
    s.pipeline_save_ms = 20;
  });
  auto first = Device::open();
  run_negate(*first);
  KernelCacheStats stats;
  for (int i = 0; i < 300 && (stats = first->kernel_cache_stats()).pipeline_cache_saves == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(stats.pipeline_cache_saves, 1u) << "no background save within 3 s";
  EXPECT_EQ(stats.pipeline_cache_loaded, 0u);
  uintmax_t saved = 0;
  ASSERT_EQ(pipeline_files(dir, &saved), 1u);
  EXPECT_GE(saved, 32u);  // at least the header (lavapipe keeps no compute pipelines in it)

  // Another process adds its pipelines: the file is merged, not overwritten.
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = "NX_VULKAN_CACHE_DIR='" + dir.string() + "' NXV_PIPELINE_CHILD=1 '" + self +
                    "' --gtest_filter=Kernels.PipelineCacheIsSavedAfterABatchAndLoadedByTheNextDevice > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  uintmax_t merged = 0;
  ASSERT_EQ(pipeline_files(dir, &merged), 1u);
  EXPECT_GE(merged, saved);

  auto second = Device::open();
  EXPECT_EQ(second->kernel_cache_stats().pipeline_cache_loaded, merged);
  run_negate(*second);
  auto t = upload(*second, DType::F32, {4}, std::vector<float>{1, -2, 3, -4});
  EXPECT_EQ(download<float>(*second, run_op(*second, "abs", {DType::F32, {4}}, {t}))[1], 2.f);
  auto after = second->kernel_cache_stats();
  std::printf("pipelines created %llu, from the saved cache (driver feedback) %llu, cache file %llu bytes\n",
              (unsigned long long)after.pipelines, (unsigned long long)after.pipeline_cache_hits,
              (unsigned long long)merged);
  // A driver that stores pipelines in the cache (NVIDIA does) creates both from it.
  if (merged > 32) EXPECT_EQ(after.pipeline_cache_hits, after.pipelines);
  first.reset();
  second.reset();
  std::filesystem::remove_all(dir);
}

// A device keeps its pipelines in the file it opened: a later NX_VULKAN_CACHE_DIR (another
// test, another device) never receives its background saves.
TEST(Kernels, PipelineCacheStaysInTheDirectoryTheDeviceOpenedWith) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  auto opened_with = fresh_cache_dir("pipelines-opened");
  auto named_later = fresh_cache_dir("pipelines-later");
  ScopedSettings quiet([](Settings& s) { s.pipeline_save_ms = 20; });
  std::shared_ptr<Device> dev;
  {
    ScopedSettings cache([&](Settings& s) { s.cache_dir = opened_with.string(); });
    dev = Device::open();
  }
  ScopedSettings cache([&](Settings& s) { s.cache_dir = named_later.string(); });
  run_negate(*dev);
  KernelCacheStats stats;
  for (int i = 0; i < 300 && (stats = dev->kernel_cache_stats()).pipeline_cache_saves == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(stats.pipeline_cache_saves, 1u) << "no background save within 3 s";
  EXPECT_EQ(pipeline_files(opened_with), 1u);
  EXPECT_FALSE(std::filesystem::exists(named_later) && pipeline_files(named_later) > 0);
  dev.reset();
  std::filesystem::remove_all(opened_with);
  std::filesystem::remove_all(named_later);
}
