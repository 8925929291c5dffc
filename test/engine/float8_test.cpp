// The 8-bit float types ({:f, 8} E5M2 and {:f8_e4m3fn, 8}) against Nx.Floating's load and dump
// functions on the host: every byte read, every f16 value and random floats written, and
// arithmetic on every pair of values.
#include <cmath>
#include <limits>

#include "fixture.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Nx.Floating.dump_f8: the high byte of <<x::float-16>> (nearest even); NaN is 0x7E.
uint8_t nx_dump_f8(double x) {
  if (std::isnan(x)) return 0x7E;
  return uint8_t(std::bit_cast<uint16_t>(static_cast<_Float16>(x)) >> 8);
}

// Nx.Floating.dump_f8_e4m3fn, step by step (Elixir's round/1 is half away from zero).
uint8_t nx_dump_e4m3fn(double x) {
  if (std::isnan(x)) return 0x7F;
  if (x == 0) return std::signbit(x) ? 0x80 : 0x00;
  double clamped = std::max(-448.0, std::min(448.0, x));
  int sign = clamped < 0;
  double abs_val = std::fabs(clamped);
  int exp_unbiased = int(std::floor(std::log2(abs_val)));
  int exp = exp_unbiased + 7;
  if (exp <= 0) return uint8_t(sign << 7 | std::min(7, int(std::round(abs_val / std::ldexp(1.0, -6) * 8))));
  double significand = abs_val / std::ldexp(1.0, exp_unbiased);
  int mantissa = std::max(0, std::min(7, int(std::round((significand - 1.0) * 8))));
  if (exp == 15 && mantissa >= 7) mantissa = 6;
  return uint8_t(sign << 7 | exp << 3 | mantissa);
}

struct Format {
  DType type;
  double (*load)(uint8_t);
  uint8_t (*dump)(double);
};

// Reads as the fixtures decode them (fixture.hpp); writes ported from Nx.Floating here.
const Format kFormats[] = {{DType::F8, fixtures::f8_to_double, nx_dump_f8},
                           {DType::F8E4M3FN, fixtures::f8e4m3fn_to_double, nx_dump_e4m3fn}};

std::vector<uint8_t> every_byte() {
  std::vector<uint8_t> v(256);
  for (int i = 0; i < 256; ++i) v[i] = uint8_t(i);
  return v;
}

// Floats that exercise rounding: every f16 value, every f8 value and the midpoints of
// neighbouring ones (each nudged by an f32 ulp both ways), random magnitudes, specials.
std::vector<float> rounding_inputs() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 65536; ++h) v.push_back(f16_bits_to_f32(uint16_t(h)));
  for (const auto& f : kFormats)
    for (int b = 0; b < 127; ++b) {
      double lo = f.load(uint8_t(b)), hi = f.load(uint8_t(b + 1));
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      float mid = float((lo + hi) / 2);
      for (float m : {mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e9f)}) {
        v.push_back(m);
        v.push_back(-m);
      }
    }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(1.f, 2.f);
  std::uniform_int_distribution<int> ex(-30, 20);
  for (int i = 0; i < 20000; ++i) v.push_back((i & 1 ? -1.f : 1.f) * std::ldexp(unit(rng), ex(rng)));
  for (float s : {448.f, 449.f, 480.f, 65504.f, 65520.f, 1e30f, 1e-30f, 1e-40f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), -0.f})
    v.push_back(s);
  return v;
}

void expect_same_byte(uint8_t got, uint8_t want, const Format& f, const std::string& what) {
  bool nan_both = std::isnan(f.load(got)) && std::isnan(f.load(want));
  EXPECT_TRUE(got == want || nan_both) << dtype_name(f.type) << " " << what << ": got 0x" << std::hex << int(got)
                                       << ", want 0x" << int(want);
}

}  // namespace

TEST(Float8, EveryByteReadsAsNxReadsIt) {
  auto dev = shared_device();
  for (const auto& f : kFormats) {
    auto t = upload(*dev, f.type, {256}, every_byte());
    auto as_f32 = download<float>(*dev, run_op(*dev, "as_type", {DType::F32, {256}}, {t}));
    auto as_f64 = download<double>(*dev, run_op(*dev, "as_type", {DType::F64, {256}}, {t}));
    for (int b = 0; b < 256; ++b) {
      double want = f.load(uint8_t(b));
      EXPECT_EQ(ulp_distance(double(as_f32[b]), want), 0u) << dtype_name(f.type) << " byte " << b;
      EXPECT_EQ(ulp_distance(as_f64[b], want), 0u) << dtype_name(f.type) << " byte " << b;
      if (want == 0) EXPECT_EQ(std::signbit(as_f32[b]), std::signbit(want)) << "sign of zero, byte " << b;
    }
  }
}

TEST(Float8, FloatsAreWrittenAsNxWritesThem) {
  auto dev = shared_device();
  auto x = rounding_inputs();
  int64_t n = int64_t(x.size());
  auto t32 = upload(*dev, DType::F32, {n}, x);
  std::vector<double> xd(x.begin(), x.end());
  auto t64 = upload(*dev, DType::F64, {n}, xd);
  for (const auto& f : kFormats) {
    auto from32 = download<uint8_t>(*dev, run_op(*dev, "as_type", {f.type, {n}}, {t32}));
    auto from64 = download<uint8_t>(*dev, run_op(*dev, "as_type", {f.type, {n}}, {t64}));
    for (int64_t i = 0; i < n; ++i) {
      expect_same_byte(from32[i], f.dump(x[i]), f, "from f32 " + std::to_string(x[i]));
      expect_same_byte(from64[i], f.dump(x[i]), f, "from f64 " + std::to_string(x[i]));
      if (HasFailure()) return;
    }
  }
}

// Every pair of bytes, so also the four-wide path with a tail (65536 + 3 elements: the last
// three repeat the first).
TEST(Float8, ArithmeticOnEveryPairMatchesNx) {
  auto dev = shared_device();
  const int64_t n = 65536 + 3;
  std::vector<uint8_t> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = uint8_t((i % 65536) >> 8);
    b[i] = uint8_t(i & 255);
  }
  for (const auto& f : kFormats) {
    auto ta = upload(*dev, f.type, {n}, a), tb = upload(*dev, f.type, {n}, b);
    struct Exact {
      const char* op;
      double (*fn)(double, double);
    };
    for (Exact e : {Exact{"add", [](double x, double y) { return x + y; }},
                    Exact{"subtract", [](double x, double y) { return x - y; }},
                    Exact{"multiply", [](double x, double y) { return x * y; }},
                    Exact{"divide", [](double x, double y) { return x / y; }},
                    Exact{"max", [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); }}}) {
      auto got = download<uint8_t>(*dev, run_op(*dev, e.op, {f.type, {n}}, {ta, tb}));
      for (int64_t i = 0; i < n && !HasFailure(); ++i)
        expect_same_byte(got[i], f.dump(e.fn(f.load(a[i]), f.load(b[i]))), f,
                         std::string(e.op) + "(" + std::to_string(a[i]) + ", " + std::to_string(b[i]) + ")");
    }
    // Comparisons read both operands exactly.
    auto less = download<uint8_t>(*dev, run_op(*dev, "less", {DType::U8, {n}}, {ta, tb}));
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(less[i], f.load(a[i]) < f.load(b[i]) ? 1 : 0) << i;
  }
}

// Math through f32: within one step of the format (Nx computes in f64 and rounds once).
TEST(Float8, MathIsWithinOneStepOfNx) {
  auto dev = shared_device();
  auto bytes = every_byte();
  for (const auto& f : kFormats) {
    auto t = upload(*dev, f.type, {256}, bytes);
    struct Fn {
      const char* op;
      double (*fn)(double);
    };
    for (Fn m : {Fn{"exp", [](double x) { return std::exp(x); }}, Fn{"log", [](double x) { return std::log(x); }},
                 Fn{"tanh", [](double x) { return std::tanh(x); }}, Fn{"sin", [](double x) { return std::sin(x); }},
                 Fn{"sqrt", [](double x) { return std::sqrt(x); }}, Fn{"erf", [](double x) { return std::erf(x); }}}) {
      auto got = download<uint8_t>(*dev, run_op(*dev, m.op, {f.type, {256}}, {t}));
      for (int b = 0; b < 256; ++b) {
        uint8_t want = f.dump(m.fn(f.load(uint8_t(b))));
        double g = f.load(got[b]), w = f.load(want);
        if (std::isnan(g) && std::isnan(w)) continue;
        // Steps between two bytes of one sign: their magnitude codes (the formats are monotonic).
        int steps = (got[b] & 0x80) == (want & 0x80) ? std::abs(int(got[b] & 0x7F) - int(want & 0x7F))
                                                       : int(got[b] & 0x7F) + int(want & 0x7F);
        EXPECT_LE(steps, std::string(m.op) == "sqrt" ? 0 : 1)
            << dtype_name(f.type) << " " << m.op << "(" << f.load(uint8_t(b)) << ") = " << g << ", Nx " << w;
      }
    }
  }
}

TEST(Float8, BitcastKeepsTheBytes) {
  auto dev = shared_device();
  auto t = upload(*dev, DType::U8, {256}, every_byte());
  for (const auto& f : kFormats) {
    Tensor v = run_op(*dev, "bitcast", {f.type, {256}}, {t});
    EXPECT_EQ(v.type, f.type);
    auto back = download<uint8_t>(*dev, run_op(*dev, "bitcast", {DType::S8, {256}}, {v}));
    EXPECT_EQ(back, every_byte());
  }
}
