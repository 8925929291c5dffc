// pow with float results (nxv_pow_f32.glsl: float operands, doubles inside) against Nx's way,
// the double pow rounded once to float: random operands over the float range, exact integer
// powers, and every pairing of special operands against the device's own f64 pow (whose
// special cases the fixtures check against Nx.BinaryBackend).
#include <cmath>
#include <limits>
#include <random>

#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

bool subnormal(float v) { return v != 0 && std::abs(v) < std::numeric_limits<float>::min(); }

std::vector<float> pow_f32(Device& dev, const std::vector<float>& x, const std::vector<float>& y) {
  int64_t n = int64_t(x.size());
  return download<float>(dev, run_op(dev, "pow", {DType::F32, {n}},
                                     {upload(dev, DType::F32, {n}, x), upload(dev, DType::F32, {n}, y)}));
}

}  // namespace

// Within 1 ulp of the double pow rounded, and equal to it but for results within ~2^-36 of a
// midpoint between two floats (a handful in 10^5 at most). Subnormal operands and results are
// left to the fixtures (some drivers flush them).
TEST(Pow, F32IsTheDoublePowRounded) {
  auto dev = shared_device();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<float> x, y;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    float b, e;
    switch (i % 4) {
      case 0:  // any positive base, small exponents
        b = float(std::exp2(-126 + 253 * unit(rng)));
        e = float(-8 + 16 * unit(rng));
        break;
      case 1:  // integer exponents, beyond the squaring path's 64 too, and negative bases
        e = float(std::floor(-100 + 200 * unit(rng)));
        b = float((i % 8 == 1 ? -1 : 1) * std::exp2(-4 + 8 * unit(rng)));
        break;
      case 2:  // results across the whole float range
        b = float(std::exp2(-126 + 253 * unit(rng)));
        e = float((-149 + 277 * unit(rng)) / std::log2(double(b)));
        break;
      default:  // bases next to 1 with large exponents: y log x needs log x's low bits
        b = float(1 + (unit(rng) - 0.5) * 0x1p-8);
        e = float((unit(rng) - 0.5) * 4e5);
        break;
    }
    x.push_back(b);
    y.push_back(e);
  }
  auto got = pow_f32(*dev, x, y);
  int64_t checked = 0, off = 0;
  for (int i = 0; i < n; ++i) {
    float want = float(std::pow(double(x[i]), double(y[i])));
    if (subnormal(want) || subnormal(x[i]) || !std::isfinite(x[i]) || !std::isfinite(y[i])) continue;
    ++checked;
    uint64_t d = ulp_distance(got[i], want);
    ASSERT_LE(d, 1u) << "pow(" << x[i] << ", " << y[i] << ") = " << got[i] << ", want " << want;
    off += d != 0;
  }
  std::printf("  pow f32: %lld of %lld results differ from the double pow rounded (by 1 ulp)\n", (long long)off,
              (long long)checked);
  EXPECT_GT(checked, n * 9 / 10);
  EXPECT_LE(off, checked / 10000);
}

// Integer exponents through squaring: x^2, x^-1 and x^3 are the double results rounded once, so
// they equal Nx's (halfway cases included); exact powers come out exact.
TEST(Pow, F32IntegerPowersRoundOnceAndStayExact) {
  auto dev = shared_device();
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> mag(-60.f, 60.f);
  std::vector<float> base;
  for (int i = 0; i < 30000; ++i) base.push_back((i % 2 ? -1.f : 1.f) * std::exp2(mag(rng)));
  for (float exponent : {2.f, -1.f, 3.f}) {
    std::vector<float> e(base.size(), exponent);
    auto got = pow_f32(*dev, base, e);
    for (size_t i = 0; i < base.size(); ++i) {
      double b = base[i];
      float want = float(exponent == 2.f ? b * b : exponent == 3.f ? b * b * b : 1.0 / b);
      if (subnormal(want)) continue;
      ASSERT_EQ(got[i], want) << "pow(" << base[i] << ", " << exponent << ")";
    }
  }
  // 4097^2 = 2^24 + 2^13 + 1 lies halfway between two floats: even, as Nx rounds it.
  std::vector<float> x = {3.f, 4097.f, 2.f, -2.f, -2.f, 10.f, 0.5f, 7.f, -3.f, 1.5f};
  std::vector<float> y = {4.f, 2.f, -3.f, 3.f, -3.f, 10.f, 20.f, 8.f, 5.f, 2.f};
  std::vector<float> want = {81.f, 16785408.f, 0.125f, -8.f, -0.125f, 1e10f, 0x1p-20f, 5764801.f, -243.f, 2.25f};
  auto got = pow_f32(*dev, x, y);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], want[i]) << "pow(" << x[i] << ", " << y[i] << ")";
}

// Zeros (both signs), infinities, NaN, +-1, negative bases with fractional exponents: every
// pairing gives what the device's f64 pow gives, rounded to f32 (NaN for NaN).
TEST(Pow, F32SpecialOperandsAsTheF64Pow) {
  auto dev = shared_device();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = {0.f, -0.f, 1.f, -1.f, 0.5f, -0.5f, 2.f, -2.f, 3.f, -3.f, 2.5f, -2.5f,
                                inf, -inf, nan, 1e30f, -1e30f, 1e-30f, 65.f, -65.f, 16777217.f, 3e9f};
  std::vector<float> x, y;
  std::vector<double> xd, yd;
  for (float a : v)
    for (float b : v) x.push_back(a), y.push_back(b), xd.push_back(a), yd.push_back(b);
  int64_t n = int64_t(x.size());
  auto got = pow_f32(*dev, x, y);
  auto wide = download<double>(*dev, run_op(*dev, "pow", {DType::F64, {n}},
                                            {upload(*dev, DType::F64, {n}, xd), upload(*dev, DType::F64, {n}, yd)}));
  for (int64_t i = 0; i < n; ++i) {
    float want = float(wide[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << "pow(" << x[i] << ", " << y[i] << ") = " << got[i];
      continue;
    }
    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want))
        << "pow(" << x[i] << ", " << y[i] << ") = " << got[i] << ", want " << want;
  }
}
