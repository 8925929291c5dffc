// Helpers for engine tests: typed uploads/downloads, host references and float comparison.
#pragma once
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nxv/device.hpp"
#include "nxv/error.hpp"
#include "nxv/ops.hpp"
#include "nxv/tensor.hpp"

namespace nxv::test {

inline std::shared_ptr<Device> shared_device() {
  static std::shared_ptr<Device> d = Device::open();
  return d;
}

template <class T>
Tensor upload(Device& d, DType type, const Shape& shape, const std::vector<T>& values) {
  return from_host(d, type, shape, values.data(), values.size() * sizeof(T));
}

template <class T>
std::vector<T> download(Device& d, const Tensor& t) {
  std::vector<T> out(size_t(t.size()));
  to_host(d, t, out.data(), out.size() * sizeof(T));
  return out;
}

// Distance in units in the last place between two floats of the same type (NaN == NaN).
template <class F>
uint64_t ulp_distance(F a, F b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return UINT64_MAX;
  if (a == b) return 0;
  using I = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;
  auto key = [](F x) {
    I i = std::bit_cast<I>(x);
    return i < 0 ? std::numeric_limits<I>::min() - i : i;
  };
  I ka = key(a), kb = key(b);
  return ka > kb ? uint64_t(ka) - uint64_t(kb) : uint64_t(kb) - uint64_t(ka);
}

// Sets an environment variable for one scope (lowerings read their switches per call: the dot
// family's NXV_DOT_GPU_PATHS, the elementwise family's NXV_EW_GPU_LOOPS).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// The seed of this run's samples: NXV_TEST_SEED, else a fresh one, printed so that a failure
// can be replayed.
inline uint32_t sample_seed() {
  static const uint32_t seed = [] {
    const char* env = std::getenv("NXV_TEST_SEED");
    uint32_t s = env && *env ? uint32_t(std::strtoul(env, nullptr, 10)) : std::random_device{}();
    std::printf("sampled sweeps use NXV_TEST_SEED=%u\n", s);
    return s;
  }();
  return seed;
}

// `count` cases of an exhaustive sweep, drawn with sample_seed() (every case when
// NXV_TEST_EXHAUSTIVE=1): CI runs a different sample each time and stays within its budget.
inline bool exhaustive_tests() {
  const char* env = std::getenv("NXV_TEST_EXHAUSTIVE");
  return env && std::string(env) == "1";
}

template <class T>
std::vector<T> sample_cases(std::vector<T> all, size_t count) {
  if (exhaustive_tests() || all.size() <= count) return all;
  std::mt19937 rng(sample_seed());
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count);
  return all;
}

inline uint16_t f32_to_f16_bits(float f) {
  _Float16 h = static_cast<_Float16>(f);
  return std::bit_cast<uint16_t>(h);
}
inline float f16_bits_to_f32(uint16_t b) { return static_cast<float>(std::bit_cast<_Float16>(b)); }

// The value at `p` of an integer type, sign- or zero-extended, as 64 bits.
inline uint64_t int_at(DType t, const std::byte* p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, dtype_size(t));
  size_t width = dtype_size(t) * 8;
  if (is_signed(t) && width < 64 && (bits >> (width - 1)) & 1) bits |= ~uint64_t(0) << width;
  return bits;
}

// Row-major coordinates of element i of `shape`, and back.
inline std::vector<int64_t> coords(int64_t i, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) c[d] = i % shape[d], i /= shape[d];
  return c;
}

inline int64_t linear(const std::vector<int64_t>& c, const Shape& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[d];
  return i;
}

// A test on the shared device; skipped, saying why, where no device opens.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = shared_device();
    } catch (const std::exception& e) {
      GTEST_SKIP() << "no Vulkan device: " << e.what();
    }
  }
  std::shared_ptr<Device> device_;
};

}  // namespace nxv::test
