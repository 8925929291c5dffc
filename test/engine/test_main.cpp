// Test main for the engine: turns validation layers on (unless the environment says otherwise)
// and fails any test during which the validation layer reported a message.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/settings.hpp"
#include "nxv/diagnostics.hpp"

namespace {

class ValidationListener : public testing::EmptyTestEventListener {
  void OnTestStart(const testing::TestInfo&) override { nxv::clear_validation_messages(); }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (nxv::validation_message_count() == 0) return;
    std::string all;
    for (const auto& m : nxv::validation_messages()) all += "\n  " + m;
    ADD_FAILURE() << nxv::validation_message_count() << " validation message(s) during " << info.name() << ":" << all;
  }
};

}  // namespace

int main(int argc, char** argv) {
  setenv("NX_VULKAN_VALIDATION", "1", /*overwrite=*/0);
  // A device wait that never ends fails its test, naming the stream's batches, instead of
  // stalling the run until CI's limit.
  setenv("NX_VULKAN_WAIT_LIMIT_S", "600", /*overwrite=*/0);
  // The GEMM kernels keep their coverage on lavapipe; Dot.HostBlasTier turns the BLAS tier on
  // (NX_VULKAN_HOST_BLAS, coming later in the tuning, still decides).
  nxv::ScopedSettings no_blas([](nxv::Settings& s) { s.tuning = "host_blas=0;" + s.tuning; });
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new ValidationListener);
  return RUN_ALL_TESTS();
}
