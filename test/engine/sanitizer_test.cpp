// Leak checking still catches our leaks: the loader's exemption (common/leak_check.hpp) and
// test/engine/lsan.supp cover driver allocations only. A child process of this binary opens a
// device, runs an op and leaks on purpose; LeakSanitizer must fail it and name our frame.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/leak_check.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

[[gnu::noinline]] void leak_on_purpose() {
  auto* lost = new int64_t[16];
  lost[0] = 1;
}

}  // namespace

TEST(Sanitizer, DISABLED_LeakOnPurpose) {
  auto dev = Device::open();
  auto t = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(download<float>(*dev, run_op(*dev, "add", {DType::F32, {4}}, {t, t}))[3], 8.0f);
  leak_on_purpose();
}

TEST(Sanitizer, ALeakOfOursFailsTheRun) {
#ifndef NXV_LEAK_CHECKED
  GTEST_SKIP() << "only sanitizer builds check leaks";
#else
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::filesystem::path log = std::filesystem::temp_directory_path() / ("nxv_leak_" + std::to_string(getpid()) + ".log");
  std::string cmd = "'" + self + "' --gtest_also_run_disabled_tests --gtest_filter=Sanitizer.DISABLED_LeakOnPurpose > '" +
                    log.string() + "' 2>&1";
  int status = std::system(cmd.c_str());
  std::stringstream out;
  out << std::ifstream(log).rdbuf();
  std::filesystem::remove(log);
  EXPECT_NE(status, 0) << out.str();
  EXPECT_NE(out.str().find("[       OK ] Sanitizer.DISABLED_LeakOnPurpose"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("LeakSanitizer: detected memory leaks"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("leak_on_purpose"), std::string::npos) << out.str();
  // The driver's own allocations are not reported: ours is the only leak.
  EXPECT_NE(out.str().find("SUMMARY: AddressSanitizer: 128 byte(s) leaked in 1 allocation(s)"), std::string::npos)
      << out.str();
#endif
}
