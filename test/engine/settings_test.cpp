// Settings, the device profile and the tuning: one place reads the environment, the README
// documents what it reads, and tests steer kernels per call.
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "device/device_impl.hpp"
#include "test_util.hpp"

namespace nxv::test {
namespace {

std::string readme_settings_section() {
  std::ifstream in(std::string(NXV_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  size_t begin = all.find("## Settings (environment)");
  size_t end = all.find("\n## ", begin + 1);
  EXPECT_NE(begin, std::string::npos) << "README.md has no settings section";
  return begin == std::string::npos ? "" : all.substr(begin, end - begin);
}

TEST(Settings, TheReadmeDocumentsEveryNameTheEngineReadsAndNoOther) {
  std::string section = readme_settings_section();
  std::set<std::string> documented;
  std::regex row(R"(\n\| `(NX_VULKAN_[A-Z0-9_]+))");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert((*it)[1]);
  std::set<std::string> read;
  for (const auto& s : settings_read()) {
    read.insert(std::string(s.name));
    EXPECT_TRUE(s.role == "user" || s.role == "diagnostic" || s.role == "device") << s.name;
  }
  for (const auto& name : read) EXPECT_TRUE(documented.count(name)) << name << " is read but not documented";
  for (const auto& name : documented) EXPECT_TRUE(read.count(name)) << name << " is documented but never read";
  EXPECT_GE(read.size(), 20u);
}

TEST(Settings, TheDriverEnvironmentLastsWhileInstancesOpenAndLeavesTheUsersAlone) {
  // The test runs before or after devices opened: the variable is unset or the user's between.
  std::string before = std::getenv("LP_NUM_THREADS") ? std::getenv("LP_NUM_THREADS") : "(unset)";
  {
    ScopedDriverEnvironment driver;
    ASSERT_NE(std::getenv("LP_NUM_THREADS"), nullptr);
    if (before == "(unset)") EXPECT_STREQ(std::getenv("LP_NUM_THREADS"), "0");
    else EXPECT_EQ(std::getenv("LP_NUM_THREADS"), before);
  }
  std::string after = std::getenv("LP_NUM_THREADS") ? std::getenv("LP_NUM_THREADS") : "(unset)";
  EXPECT_EQ(after, before);
  setenv("LP_NUM_THREADS", "3", 1);
  {
    ScopedDriverEnvironment driver;
    EXPECT_STREQ(std::getenv("LP_NUM_THREADS"), "3");
  }
  EXPECT_STREQ(std::getenv("LP_NUM_THREADS"), "3");
  if (before == "(unset)") unsetenv("LP_NUM_THREADS");
  else setenv("LP_NUM_THREADS", before.c_str(), 1);
}

TEST(Tuning, EntriesParseIntoTheirFieldsAndAnEmptyValueRestoresTheDefault) {
  Tuning t;
  t.apply("dot.tile=64,64,16,4,4; dot.splits=3;gpu_paths;conv.winograd=0;host_blas=1;fft.shared_max=16");
  ASSERT_TRUE(t.dot.tile.has_value());
  EXPECT_EQ((*t.dot.tile)[1], 64u);
  EXPECT_EQ((*t.dot.tile)[4], 4u);
  EXPECT_EQ(t.dot.splits, 3u);
  EXPECT_TRUE(t.gpu_paths);
  EXPECT_EQ(t.conv.winograd, Toggle::Off);
  EXPECT_EQ(t.host_blas, Toggle::On);
  EXPECT_EQ(t.fft.shared_max, 16u);
  t.set("dot.splits", "");
  t.set("host_blas", "");
  t.set("gpu_paths", "0");
  EXPECT_FALSE(t.dot.splits.has_value());
  EXPECT_EQ(t.host_blas, Toggle::Auto);
  EXPECT_FALSE(t.gpu_paths);
  t.set("dot.f32", "bf16x3");
  EXPECT_TRUE(t.dot.bf16x3);
}

TEST(Tuning, UnknownKeysAndBadValuesAreErrorsThatNameThem) {
  auto message = [](const char* entries) {
    try {
      Tuning t;
      t.apply(entries);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("dot.tiles=1").find("dot.tiles"), std::string::npos);
  EXPECT_NE(message("dot.tile=64,64,16").find("5 numbers"), std::string::npos);
  EXPECT_NE(message("dot.splits=three").find("a number"), std::string::npos);
  EXPECT_NE(message("gpu_paths=yes").find("1 or 0"), std::string::npos);
  EXPECT_NE(message("dot.f32=f16").find("bf16x3 or f32"), std::string::npos);
}

// A ScopedTuning changes its own thread's calls only, nests, and ends in order.
TEST(Tuning, AScopeChangesOnlyItsThreadAndNests) {
  ASSERT_FALSE(tuning().dot.splits.has_value());
  {
    ScopedTuning outer("dot.splits", "3");
    EXPECT_EQ(tuning().dot.splits, 3u);
    {
      ScopedTuning inner([](Tuning& t) { t.dot.no_rows = true; });
      EXPECT_EQ(tuning().dot.splits, 3u);
      EXPECT_TRUE(tuning().dot.no_rows);
    }
    EXPECT_FALSE(tuning().dot.no_rows);
    std::optional<uint32_t> seen = 1;
    std::thread([&] { seen = tuning().dot.splits; }).join();
    EXPECT_FALSE(seen.has_value());
  }
  EXPECT_FALSE(tuning().dot.splits.has_value());
}

// The process's tuning follows the settings: NX_VULKAN_TUNING's entries after those of the
// user settings that choose kernels.
TEST(Tuning, TheProcessTuningComesFromTheSettings) {
  {
    ScopedSettings s([](Settings& s) { s.tuning = "host_blas=1;dot.matvec_lx=8;host_blas=0"; });
    EXPECT_EQ(tuning().dot.matvec_lx, 8u);
    EXPECT_EQ(tuning().host_blas, Toggle::Off);
  }
  EXPECT_FALSE(tuning().dot.matvec_lx.has_value());
}

// The profile decides per device what used to hang on the device type's name and on
// scattered switches; the settings' overrides win over its defaults.
TEST(DeviceProfile, DefaultsFollowTheDriverAndSettingsOverrideThem) {
  auto dev = shared_device();
  const DeviceProfile& p = dev->impl().core->profile();
  bool cpu = dev->info().type == "cpu";
  auto env = settings();
  EXPECT_EQ(p.cpu_driver, cpu);
  EXPECT_EQ(p.spirv_optimize, env->spirv_optimize.value_or(!cpu));
  EXPECT_EQ(p.submit_exclusion, env->submit_exclusion.value_or(dev->info().vendor_id == 0x10DE));
  EXPECT_EQ(uint64_t(p.submit_defer.count()), env->submit_defer_us.value_or(cpu ? 0 : 50));
  EXPECT_EQ(uint64_t(p.wait_spin.count()), env->wait_spin_us.value_or(cpu ? 100 : 0));
  Settings s;
  s.submit_exclusion = true;
  s.submit_defer_us = 0;
  s.spirv_optimize = cpu;
  s.stream_reuse = false;
  s.pipeline_save_ms = 7;
  s.wait_spin_us = 0;
  DeviceProfile o = DeviceProfile::of(dev->info(), s);
  EXPECT_TRUE(o.submit_exclusion);
  EXPECT_EQ(o.submit_defer.count(), 0);
  EXPECT_EQ(o.spirv_optimize, cpu);
  EXPECT_FALSE(o.stream_reuse);
  EXPECT_EQ(o.pipeline_save_quiet.count(), 7);
  EXPECT_EQ(o.wait_spin.count(), 0);
  EXPECT_EQ(cpu_paths(p), cpu);
  ScopedTuning gpu("gpu_paths", "1");
  EXPECT_FALSE(cpu_paths(p));
}

}  // namespace
}  // namespace nxv::test

namespace nxv::test {
namespace {

// Every test belongs to one CTest label (test/engine/CMakeLists.txt's NXV_TEST_LABELS), so
// that `ctest -L <family>` finds it.
TEST(TestLabels, EverySuiteHasALabel) {
  std::string filters = NXV_LABELLED_SUITES;
  std::vector<std::string> patterns;
  for (size_t i = 0; i < filters.size();) {
    size_t end = filters.find(':', i);
    if (end == std::string::npos) end = filters.size();
    if (end > i) patterns.push_back(filters.substr(i, end - i));
    i = end + 1;
  }
  auto* unit = testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    std::string suite = unit->GetTestSuite(i)->name();
    bool found = false;
    for (const auto& p : patterns) {
      std::string prefix = p.substr(0, p.size() - 1);  // "Dot." of "Dot.*", "Conformance/" of "Conformance/*"
      found |= (suite + ".").starts_with(prefix) || (suite + "/").starts_with(prefix);
    }
    EXPECT_TRUE(found) << suite << " is in no CTest label";
  }
}

}  // namespace
}  // namespace nxv::test
