#include <gtest/gtest.h>

#include <cctype>
#include <vector>

#include "common/settings.hpp"
#include "nxv/device.hpp"
#include "nxv/error.hpp"
#include "nxv/tensor.hpp"

TEST(Device, ListsAtLeastOneDeviceWithItsFacts) {
  auto devices = nxv::list_devices();
  ASSERT_FALSE(devices.empty());
  for (const auto& d : devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.max_workgroup_invocations, 0u);
    EXPECT_GT(d.subgroup_size, 0u);
    EXPECT_FALSE(d.heaps.empty());
    EXPECT_TRUE(d.features.buffer_device_address);
  }
}

TEST(Device, OpensDefaultAndByIndexAndByName) {
  auto a = nxv::Device::open();
  auto b = nxv::Device::open({.selector = "0"});
  auto devices = nxv::list_devices();
  auto c = nxv::Device::open({.selector = devices[0].name.substr(0, 4)});
  EXPECT_EQ(b->info().name, devices[0].name);
  EXPECT_EQ(c->info().name, devices[0].name);
  EXPECT_FALSE(a->info().name.empty());
}

// A UUID prefix (dashes and case ignored) picks the device whose UUID starts with it; one
// that matches none is then tried as a name, and fails naming the selector.
TEST(Device, OpensByUuidPrefix) {
  auto devices = nxv::list_devices();
  const std::string& uuid = devices.back().uuid;
  ASSERT_EQ(uuid.size(), 32u);
  std::string dashed = uuid.substr(0, 8) + "-" + uuid.substr(8, 4);
  for (char& c : dashed) c = char(std::toupper(static_cast<unsigned char>(c)));
  auto d = nxv::Device::open({.selector = dashed});
  EXPECT_EQ(d->info().uuid, uuid);
  EXPECT_EQ(d->info().index, devices.back().index);
  std::string other = uuid.substr(0, 7) + (uuid[7] == '0' ? "1" : "0");
  bool taken = false;
  for (const auto& info : devices) taken |= info.uuid.starts_with(other);
  if (!taken) EXPECT_THROW(nxv::Device::open({.selector = other}), nxv::Error);
}

// Freed memory kept for reuse goes back to the driver on request.
TEST(Device, ClearingTheBufferCacheFreesWhatItKept) {
  auto dev = nxv::Device::open();
  {
    std::vector<float> data(1 << 16, 1.f);
    auto t = nxv::from_host(*dev, nxv::DType::F32, {1 << 16}, data.data(), data.size() * sizeof(float));
  }
  dev->synchronize();
  nxv::MemoryStats kept = dev->memory_stats();
  EXPECT_GT(kept.cached_bytes, 0u);
  dev->clear_buffer_cache();
  nxv::MemoryStats cleared = dev->memory_stats();
  EXPECT_EQ(cleared.cached_bytes, 0u);
  EXPECT_EQ(cleared.bytes_in_use, kept.bytes_in_use);  // what tensors hold stays
  std::vector<float> again(1 << 16, 2.f);
  auto t = nxv::from_host(*dev, nxv::DType::F32, {1 << 16}, again.data(), again.size() * sizeof(float));
  EXPECT_EQ(nxv::to_host(*dev, t).size(), again.size() * sizeof(float));
}

TEST(Device, BadSelectorIsAClearError) {
  try {
    nxv::Device::open({.selector = "no-such-gpu-xyz"});
    FAIL() << "expected an error";
  } catch (const nxv::Error& e) {
    EXPECT_EQ(e.kind(), nxv::ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no-such-gpu-xyz"), std::string::npos);
  }
  EXPECT_THROW(nxv::Device::open({.selector = "99"}), nxv::Error);
}

TEST(Device, CapabilityMaskTurnsFeaturesOff) {
  auto full = nxv::Device::open();
  auto masked = nxv::Device::open({.disabled = nxv::parse_capability_mask("f64,int64,f16,bf16,coopmat,subgroup")});
  EXPECT_FALSE(masked->has(nxv::kCapFloat64));
  EXPECT_FALSE(masked->has(nxv::kCapInt64));
  EXPECT_FALSE(masked->info().features.float64);
  EXPECT_FALSE(masked->info().features.subgroup_arithmetic);
  EXPECT_TRUE(masked->info().cooperative_matrix_shapes.empty());
  // The unmasked device, opened at the same time, keeps what the driver offers.
  EXPECT_EQ(full->has(nxv::kCapFloat64), nxv::list_devices()[full->info().index].features.float64);
  EXPECT_THROW(nxv::parse_capability_mask("f64,warp-drive"), nxv::Error);
}

// A kernel cache directory that cannot be created is a clear error when a device opens, naming
// the setting that changes it (NX_VULKAN_CACHE_DIR), and off keeps kernels in memory.
TEST(Device, AnUnwritableCacheDirectoryIsAnErrorNamingItsSetting) {
  {
    nxv::ScopedSettings unwritable([](nxv::Settings& s) { s.cache_dir = "/proc/nxv_no_such_cache"; });
    try {
      nxv::Device::open();
      ADD_FAILURE() << "opened a device with an unwritable cache directory";
    } catch (const nxv::Error& e) {
      EXPECT_EQ(e.kind(), nxv::ErrorKind::Unsupported);
      EXPECT_NE(std::string(e.what()).find("NX_VULKAN_CACHE_DIR"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("/proc/nxv_no_such_cache"), std::string::npos) << e.what();
    }
  }
  nxv::ScopedSettings off([](nxv::Settings& s) { s.cache_dir.clear(); });
  EXPECT_NO_THROW(nxv::Device::open());
}
