// Helpers for engine tests: typed uploads/downloads, host references and float comparison.
#pragma once
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/settings.hpp"
#include "common/tuning.hpp"
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

// Typed values as the engine stores them, for host references (complex doubles hold any type).
inline double real_bits_at(DType t, const std::byte* p) {
  switch (t) {
    case DType::F16: { uint16_t h; std::memcpy(&h, p, 2); return f16_bits_to_f32(h); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return std::bit_cast<float>(uint32_t(h) << 16); }
    case DType::F32: case DType::C64: { float f; std::memcpy(&f, p, 4); return f; }
    default: { double d; std::memcpy(&d, p, 8); return d; }
  }
}

// Any value as a complex double (integers by their signed or unsigned value).
inline std::complex<double> typed_value_at(DType t, const std::byte* p) {
  if (is_integer(t)) {
    uint64_t v = int_at(t, p);
    return is_signed(t) ? double(int64_t(v)) : double(v);
  }
  if (t == DType::C64) return {real_bits_at(t, p), real_bits_at(t, p + 4)};
  if (t == DType::C128) return {real_bits_at(t, p), real_bits_at(t, p + 8)};
  return real_bits_at(t, p);
}

inline void store_real(DType t, double v, std::byte* p) {
  switch (t) {
    case DType::F16: { uint16_t h = f32_to_f16_bits(float(v)); std::memcpy(p, &h, 2); break; }
    case DType::BF16: { uint16_t h = uint16_t(std::bit_cast<uint32_t>(float(v)) >> 16); std::memcpy(p, &h, 2); break; }
    case DType::F32: { float f = float(v); std::memcpy(p, &f, 4); break; }
    case DType::C64: { float f[2] = {float(v), 0}; std::memcpy(p, f, 8); break; }
    case DType::C128: { double d[2] = {v, 0}; std::memcpy(p, d, 16); break; }
    default: std::memcpy(p, &v, 8);
  }
}

// Integers over their whole range; floats in [-2, 2) (complex: both parts).
inline std::vector<std::byte> random_typed_values(DType t, size_t n, std::mt19937& rng) {
  size_t size = dtype_size(t);
  std::vector<std::byte> out(n * size);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * size;
    if (is_integer(t)) {
      uint64_t v = uint64_t(rng()) << 32 | rng();
      std::memcpy(p, &v, size);
    } else if (is_complex(t)) {
      store_real(t, real(rng), p);
      if (t == DType::C64) { float im = float(real(rng)); std::memcpy(p + 4, &im, 4); }
      else { double im = real(rng); std::memcpy(p + 8, &im, 8); }
    } else {
      store_real(t, real(rng), p);
    }
  }
  return out;
}

// The unit roundoff of a float type (f32 for c64, f64 for c128 and the others).
inline double type_epsilon(DType t) {
  switch (t) {
    case DType::F16: return 0x1p-11;
    case DType::BF16: return 0x1p-7;
    case DType::F32: case DType::C64: return 0x1p-24;
    default: return 0x1p-53;
  }
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
