#include <gtest/gtest.h>

#include "nxv/device.hpp"
#include "nxv/error.hpp"

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
