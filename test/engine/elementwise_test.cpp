// Elementwise ops against host references: every size class around workgroup and dispatch
// limits, broadcasting, non-contiguous views, any rank, mixed types.
#include <complex>
#include <limits>
#include <thread>

#include "device/device_impl.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -100.f, float hi = 100.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

class AddSizes : public testing::TestWithParam<int64_t> {};

TEST_P(AddSizes, MatchesHostAcrossWorkgroupBoundaries) {
  auto dev = shared_device();
  int64_t n = GetParam();
  auto a = random_floats(size_t(n), 1), b = random_floats(size_t(n), 2);
  auto ta = upload(*dev, DType::F32, {n}, a), tb = upload(*dev, DType::F32, {n}, b);
  auto out = download<float>(*dev, run_op(*dev, "add", {DType::F32, {n}}, {ta, tb}));
  ASSERT_EQ(out.size(), size_t(n));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "at " << i;
}

INSTANTIATE_TEST_SUITE_P(Elementwise, AddSizes,
                         testing::Values(0, 1, 255, 256, 257, 65535, 65536, 65537, 65535 * 256 + 1));

TEST(Elementwise, BinaryOpsOnF32MatchHostIncludingSpecialValues) {
  auto dev = shared_device();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {1.5f, -2.f, 0.f, -0.f, inf, -inf, nan, 3.f, 7.f, 1e-40f};
  std::vector<float> b = {2.f, 0.f, -0.f, 0.f, inf, 2.f, 1.f, nan, -7.f, 1e-40f};
  // Subnormals only where the device keeps them (NVIDIA flushes f32 subnormals: README, Known limits).
  if (!dev->impl().core->float_controls().denorm_preserve32) a.pop_back(), b.pop_back();
  int64_t n = int64_t(a.size());
  auto ta = upload(*dev, DType::F32, {n}, a), tb = upload(*dev, DType::F32, {n}, b);
  auto check = [&](const char* op, auto ref) {
    auto out = download<float>(*dev, run_op(*dev, op, {DType::F32, {n}}, {ta, tb}));
    for (int64_t i = 0; i < n; ++i) {
      float want = ref(a[i], b[i]);
      EXPECT_EQ(ulp_distance(out[i], want), 0u) << op << "(" << a[i] << ", " << b[i] << ") = " << out[i] << ", want " << want;
      if (want == 0) EXPECT_EQ(std::signbit(out[i]), std::signbit(want)) << op << " sign of zero at " << i;
    }
  };
  check("add", [](float x, float y) { return x + y; });
  check("subtract", [](float x, float y) { return x - y; });
  check("multiply", [](float x, float y) { return x * y; });
  check("divide", [](float x, float y) { return x / y; });
  // Nx: NaN wins; on a tie the first operand is kept.
  check("max", [](float x, float y) { return std::isnan(x) || std::isnan(y) ? NAN : (x >= y ? x : y); });
  check("min", [](float x, float y) { return std::isnan(x) || std::isnan(y) ? NAN : (x <= y ? x : y); });
}

TEST(Elementwise, IntegerOpsWrapLikeNx) {
  auto dev = shared_device();
  std::vector<int32_t> a = {INT32_MAX, INT32_MIN, -7, 5, 0};
  std::vector<int32_t> b = {1, -1, 3, -9, 0};
  auto ta = upload(*dev, DType::S32, {5}, a), tb = upload(*dev, DType::S32, {5}, b);
  auto sum = download<int32_t>(*dev, run_op(*dev, "add", {DType::S32, {5}}, {ta, tb}));
  auto prod = download<int32_t>(*dev, run_op(*dev, "multiply", {DType::S32, {5}}, {ta, tb}));
  auto neg = download<int32_t>(*dev, run_op(*dev, "negate", {DType::S32, {5}}, {ta}));
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(sum[i], int32_t(uint32_t(a[i]) + uint32_t(b[i])));
    EXPECT_EQ(prod[i], int32_t(uint32_t(a[i]) * uint32_t(b[i])));
    EXPECT_EQ(neg[i], int32_t(0u - uint32_t(a[i])));
  }
  std::vector<uint8_t> u = {250, 3, 128, 0}, v = {10, 255, 128, 1};
  auto tu = upload(*dev, DType::U8, {4}, u), tv = upload(*dev, DType::U8, {4}, v);
  auto s8 = download<uint8_t>(*dev, run_op(*dev, "add", {DType::U8, {4}}, {tu, tv}));
  auto m8 = download<uint8_t>(*dev, run_op(*dev, "max", {DType::U8, {4}}, {tu, tv}));
  for (size_t i = 0; i < u.size(); ++i) {
    EXPECT_EQ(s8[i], uint8_t(u[i] + v[i]));
    EXPECT_EQ(m8[i], std::max(u[i], v[i]));
  }
  std::vector<int64_t> x = {INT64_MAX, -3, 1ll << 40};
  std::vector<int64_t> y = {1, 5, 1ll << 30};
  auto tx = upload(*dev, DType::S64, {3}, x), ty = upload(*dev, DType::S64, {3}, y);
  auto p64 = download<int64_t>(*dev, run_op(*dev, "multiply", {DType::S64, {3}}, {tx, ty}));
  auto a64 = download<int64_t>(*dev, run_op(*dev, "add", {DType::S64, {3}}, {tx, ty}));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(p64[i], int64_t(uint64_t(x[i]) * uint64_t(y[i])));
    EXPECT_EQ(a64[i], int64_t(uint64_t(x[i]) + uint64_t(y[i])));
  }
}

TEST(Elementwise, MixedTypesAreConvertedToTheOutputType) {
  auto dev = shared_device();
  // Nx hands add(s32[3], f32 scalar) -> f32[3] un-broadcast and un-cast.
  auto ti = upload(*dev, DType::S32, {3}, std::vector<int32_t>{1, -2, 16777217});
  auto ts = upload(*dev, DType::F32, {}, std::vector<float>{0.5f});
  auto out = download<float>(*dev, run_op(*dev, "add", {DType::F32, {3}}, {ti, ts}));
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -1.5f);
  // Nx adds the exact integer in f64 and rounds once: 16777217.5 -> 16777218. Where the device
  // has f64 the engine does the same; without it the integer is converted to f32 first.
  EXPECT_EQ(out[2], dev->has(nxv::kCapFloat64) ? float(double(16777217) + 0.5) : float(16777217) + 0.5f);
  auto tu = upload(*dev, DType::U8, {2}, std::vector<uint8_t>{200, 7});
  auto tf = upload(*dev, DType::F64, {2}, std::vector<double>{0.25, -1e300});
  auto d = download<double>(*dev, run_op(*dev, "multiply", {DType::F64, {2}}, {tu, tf}));
  EXPECT_EQ(d[0], 50.0);
  EXPECT_EQ(d[1], -7e300);
}

TEST(Elementwise, BroadcastsSizeOneAndMissingLeadingAxes) {
  auto dev = shared_device();
  // a: {2,1,3}, b: {4,1} -> out {2,4,3}
  std::vector<float> a = random_floats(6, 3), b = random_floats(4, 4);
  auto ta = upload(*dev, DType::F32, {2, 1, 3}, a), tb = upload(*dev, DType::F32, {4, 1}, b);
  auto out = download<float>(*dev, run_op(*dev, "subtract", {DType::F32, {2, 4, 3}}, {ta, tb}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(out[(i * 4 + j) * 3 + k], a[i * 3 + k] - b[j]);
  EXPECT_THROW(run_op(*dev, "add", {DType::F32, {2, 4, 3}}, {ta, upload(*dev, DType::F32, {5}, random_floats(5, 1))}),
               Error);
}

TEST(Elementwise, NonContiguousInputs) {
  auto dev = shared_device();
  std::vector<float> a = random_floats(5 * 7, 5);
  auto ta = upload(*dev, DType::F32, {5, 7}, a);
  Tensor t = transpose_view(ta, {1, 0});                    // {7,5}
  Tensor s = slice_view(ta, {1, 0}, {3, 4}, {1, 2});        // rows 1..3, cols 0,2,4,6
  auto out_t = download<float>(*dev, run_op(*dev, "negate", {DType::F32, {7, 5}}, {t}));
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(out_t[i * 5 + j], -a[j * 7 + i]);
  auto out_s = download<float>(*dev, run_op(*dev, "multiply", {DType::F32, {3, 4}}, {s, s}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out_s[i * 4 + j], a[(1 + i) * 7 + 2 * j] * a[(1 + i) * 7 + 2 * j]);
  // A download of a view makes it contiguous first.
  auto back = download<float>(*dev, t);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(back[i * 5 + j], a[j * 7 + i]);
}

// On CPU drivers strided kernels walk runs of consecutive elements (strided_runs);
// the GPU's loop (gpu_paths) takes one element per invocation. Both against the host,
// exactly: broadcast rows and columns, last axes shorter and longer than a run (runs crossing
// rows), a transposed and a stepped view, three inputs, and rank 9 (several launches, each
// starting mid-tensor).
TEST(Elementwise, StridedRunsAndTheGpuLoopMatchTheHost) {
  auto dev = shared_device();
  std::mt19937 rng(sample_seed());
  auto ints = [&](const Shape& shape) {
    std::vector<int32_t> v(size_t(shape_size(shape)));
    for (auto& x : v) x = int32_t(rng() % 2001) - 1000;
    return v;
  };
  struct Case {
    Shape out, a, b;
  };
  const Case cases[] = {{{37, 53}, {37, 53}, {53}},     {{37, 53}, {37, 53}, {37, 1}},   {{5, 3, 7}, {5, 3, 7}, {5, 1, 7}},
                        {{4, 2, 35}, {2, 1}, {4, 1, 35}}, {{300, 3}, {3}, {300, 1}},      {{2, 3, 2, 3, 2, 3, 2, 3, 2},
                                                                                            {2, 1, 2, 1, 2, 1, 2, 1, 2},
                                                                                            {1, 3, 1, 3, 1, 3, 1, 3, 1}}};
  for (const char* loops : {"0", "1"}) {
    ScopedTuning gpu_loops("gpu_paths", loops);
    for (const Case& c : cases) {
      auto a = ints(c.a), b = ints(c.b);
      auto got = download<int32_t>(*dev, run_op(*dev, "add", {DType::S32, c.out},
                                                {upload(*dev, DType::S32, c.a, a), upload(*dev, DType::S32, c.b, b)}));
      size_t rank = c.out.size();
      auto at = [&](const Shape& in, int64_t i) {  // in's element under output element i
        auto oc = coords(i, c.out);
        std::vector<int64_t> ic(in.size());
        for (size_t d = 0; d < in.size(); ++d) ic[d] = in[d] == 1 ? 0 : oc[rank - in.size() + d];
        return size_t(linear(ic, in));
      };
      for (int64_t i = 0; i < shape_size(c.out); ++i)
        ASSERT_EQ(got[size_t(i)], a[at(c.a, i)] + b[at(c.b, i)]) << "GPU loops " << loops << ", rank " << rank << " at " << i;
    }
    // A transposed view times a stepped one, and select of three strided inputs.
    auto x = ints({53, 37}), y = ints({37, 106});
    Tensor tx = upload(*dev, DType::S32, {53, 37}, x), ty = upload(*dev, DType::S32, {37, 106}, y);
    Tensor xt = transpose_view(tx, {1, 0}), ys = slice_view(ty, {0, 1}, {37, 53}, {1, 2});
    auto prod = download<int32_t>(*dev, run_op(*dev, "multiply", {DType::S32, {37, 53}}, {xt, ys}));
    auto pred = ints({37, 1});
    Tensor tp = upload(*dev, DType::S32, {37, 1}, pred);
    auto sel = download<int32_t>(*dev, run_op(*dev, "select", {DType::S32, {37, 53}}, {tp, xt, ys}));
    for (int64_t i = 0; i < 37; ++i)
      for (int64_t j = 0; j < 53; ++j) {
        int32_t xv = x[size_t(j * 37 + i)], yv = y[size_t(i * 106 + 1 + 2 * j)];
        ASSERT_EQ(prod[size_t(i * 53 + j)], xv * yv) << "GPU loops " << loops << " at " << i << "," << j;
        ASSERT_EQ(sel[size_t(i * 53 + j)], pred[size_t(i)] != 0 ? xv : yv) << "GPU loops " << loops << " at " << i << "," << j;
      }
  }
}

TEST(Elementwise, HighRankThatCannotCollapse) {
  auto dev = shared_device();
  // Alternating broadcast axes over rank 9 keep 9 axes after collapsing (> 6 in one dispatch).
  Shape out_shape = {2, 3, 2, 3, 2, 3, 2, 3, 2};
  Shape a_shape = {2, 1, 2, 1, 2, 1, 2, 1, 2};
  Shape b_shape = {1, 3, 1, 3, 1, 3, 1, 3, 1};
  auto a = random_floats(size_t(shape_size(a_shape)), 6), b = random_floats(size_t(shape_size(b_shape)), 7);
  auto ta = upload(*dev, DType::F32, a_shape, a), tb = upload(*dev, DType::F32, b_shape, b);
  auto out = download<float>(*dev, run_op(*dev, "add", {DType::F32, out_shape}, {ta, tb}));
  auto as = row_major_strides(a_shape), bs = row_major_strides(b_shape);
  int64_t n = shape_size(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = 8; d >= 0; --d) {
      int64_t c = rest % out_shape[d];
      rest /= out_shape[d];
      if (a_shape[d] != 1) ia += c * as[d];
      if (b_shape[d] != 1) ib += c * bs[d];
    }
    ASSERT_EQ(out[size_t(i)], a[size_t(ia)] + b[size_t(ib)]) << "at " << i;
  }
}

TEST(Elementwise, UnaryMathOnF32AndF64) {
  auto dev = shared_device();
  std::vector<double> x = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 80.0, -80.0, 700.0, -740.0, 1e-310, 3.0e8,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), NAN};
  int64_t n = int64_t(x.size());
  auto t64 = upload(*dev, DType::F64, {n}, x);
  auto e64 = download<double>(*dev, run_op(*dev, "exp", {DType::F64, {n}}, {t64}));
  auto l64 = download<double>(*dev, run_op(*dev, "log", {DType::F64, {n}}, {t64}));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(ulp_distance(e64[i], std::exp(x[i])), 2u) << "exp(" << x[i] << ") = " << e64[i];
    EXPECT_LE(ulp_distance(l64[i], std::log(x[i])), 2u) << "log(" << x[i] << ") = " << l64[i];
  }
  std::vector<float> xf;
  for (double v : x) xf.push_back(float(v));
  auto t32 = upload(*dev, DType::F32, {n}, xf);
  auto e32 = download<float>(*dev, run_op(*dev, "exp", {DType::F32, {n}}, {t32}));
  auto l32 = download<float>(*dev, run_op(*dev, "log", {DType::F32, {n}}, {t32}));
  for (size_t i = 0; i < xf.size(); ++i) {
    EXPECT_LE(ulp_distance(e32[i], std::exp(xf[i])), 4u) << "exp(" << xf[i] << ") = " << e32[i];
    EXPECT_LE(ulp_distance(l32[i], std::log(xf[i])), 4u) << "log(" << xf[i] << ") = " << l32[i];
  }
}

// f64 exp (its polynomial in Estrin's form) within 2 ulp of the host's over its whole range, the
// reduced argument's edges and tiny arguments; subnormal results are left to the fixtures.
TEST(Elementwise, ExpF64WithinTwoUlpOverItsRange) {
  auto dev = shared_device();
  std::vector<double> x;
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> wide(-708.0, 709.78), near(-1.0, 1.0);
  for (int i = 0; i < 40000; ++i) x.push_back(wide(rng));
  for (int i = 0; i < 20000; ++i) x.push_back(near(rng));
  for (int k = -20; k <= 20; ++k)  // around k ln2 / 2, where the reduced argument is largest
    for (double d : {-1e-12, 0.0, 1e-12}) x.push_back((k + 0.5) * 0.6931471805599453 + d);
  for (double v : {1e-300, -1e-300, 1e-17, -1e-17, 2.2e-16, 709.782712893383, -708.39})
    x.push_back(v);
  const int64_t n = int64_t(x.size());
  auto got = download<double>(*dev, run_op(*dev, "exp", {DType::F64, {n}}, {upload(*dev, DType::F64, {n}, x)}));
  uint64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t d = ulp_distance(got[size_t(i)], std::exp(x[size_t(i)]));
    worst = std::max(worst, d);
    ASSERT_LE(d, 2u) << "exp(" << x[size_t(i)] << ") = " << got[size_t(i)];
  }
  std::printf("  exp f64: worst %llu ulp over %lld inputs\n", (unsigned long long)worst, (long long)n);
}

// f32 math with float algorithms of its own (erf family, sqrt, asin/acos, log1p, ...), rsqrt and
// cbrt (float results from doubles) and the series cut to float precision, against double
// references on a dense grid and on random magnitudes.
// Bounds: the fixtures' (erf/erfc 8 ulp, erf_inv 32), sqrt correctly rounded, rsqrt and cbrt
// 1 ulp. Subnormal inputs and results are left to the fixtures (some drivers flush them).
TEST(Elementwise, FloatMathWithinItsBounds) {
  auto dev = shared_device();
  std::vector<float> x;
  for (int i = -22000; i <= 22000; ++i) x.push_back(float(i) / 2000.0f);  // [-11, 11]
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> expo(-40.f, 38.f);
  for (int i = 0; i < 20000; ++i) x.push_back((i % 2 ? -1.f : 1.f) * std::pow(10.f, expo(rng)));
  // Edges of the f32 sinh/tanh reductions: 2^-12, tanh's clamp, sinh's split scale and overflow.
  for (float v : {0.000244140625f, 0.00024414f, 9.01f, 9.5f, 44.0f, 88.72f, 89.07f, 89.1f, 89.4159f, 89.416f,
                  89.5f, -89.41f})
    x.push_back(v);
  for (float v : {0.f, -0.f, 1.f, -1.f, 0.75f, -0.75f, 2.f, 3.92f, 10.05f, 10.06f, 27.f, -8.f, 0.125f, 1e-30f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    x.push_back(v);
  const int64_t n = int64_t(x.size());
  auto t = upload(*dev, DType::F32, {n}, x);
  auto run = [&](const char* op, const Tensor& in) { return download<float>(*dev, run_op(*dev, op, {DType::F32, {n}}, {in})); };
  auto check = [&](const char* op, const std::vector<float>& in, const std::vector<float>& got, auto ref, uint64_t bound) {
    uint64_t worst = 0;
    float worst_at = 0;
    for (int64_t i = 0; i < n; ++i) {
      float want = float(ref(double(in[i])));
      auto subnormal = [](float v) { return v != 0 && std::abs(v) < std::numeric_limits<float>::min(); };
      if (subnormal(want) || subnormal(in[i])) continue;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << op << "(" << in[i] << ") = " << got[i];
        continue;
      }
      uint64_t d = ulp_distance(got[i], want);
      if (d > worst) worst = d, worst_at = in[i];
      ASSERT_LE(d, bound) << op << "(" << in[i] << ") = " << got[i] << ", want " << want;
      if (want == 0) ASSERT_EQ(std::signbit(got[i]), std::signbit(want)) << op << "(" << in[i] << ")";
    }
    std::printf("  %s f32: worst %llu ulp (at %.9g) over %lld inputs\n", op, (unsigned long long)worst, worst_at,
                (long long)n);
  };
  check("erf", x, run("erf", t), [](double v) { return std::erf(v); }, 8);
  check("erfc", x, run("erfc", t), [](double v) { return std::erfc(v); }, 8);
  check("sqrt", x, run("sqrt", t), [](double v) { return std::sqrt(v); }, 0);
  check("rsqrt", x, run("rsqrt", t), [](double v) { return 1.0 / std::sqrt(v); }, 1);
  check("cbrt", x, run("cbrt", t), [](double v) { return std::cbrt(v); }, 1);
  // Float polynomials shortened to float precision (nxv_real.glsl): the fixtures' 4 ulp.
  check("sin", x, run("sin", t), [](double v) { return std::sin(v); }, 4);
  check("cos", x, run("cos", t), [](double v) { return std::cos(v); }, 4);
  check("tan", x, run("tan", t), [](double v) { return std::tan(v); }, 4);
  check("expm1", x, run("expm1", t), [](double v) { return std::expm1(v); }, 4);
  check("tanh", x, run("tanh", t), [](double v) { return std::tanh(v); }, 4);
  check("sinh", x, run("sinh", t), [](double v) { return std::sinh(v); }, 4);
  check("atan", x, run("atan", t), [](double v) { return std::atan(v); }, 4);
  check("asin", x, run("asin", t), [](double v) { return std::asin(v); }, 4);
  check("log1p", x, run("log1p", t), [](double v) { return std::log1p(v); }, 4);
  check("log", x, run("log", t), [](double v) { return std::log(v); }, 4);
  check("asinh", x, run("asinh", t), [](double v) { return std::asinh(v); }, 4);
  // erf_inv on (-1, 1): a grid, values near +-1 and tiny ones; reference by Newton on erfc.
  std::vector<float> y;
  for (int i = -9999; i <= 9999; ++i) y.push_back(float(i) / 10000.0f);
  for (int k = 1; k <= 2000; ++k) y.push_back(1.0f - float(k) * 0x1p-24f), y.push_back(-1.0f + float(k) * 0x1p-24f);
  for (float v : {1e-30f, -1e-20f, 1.0f, -1.0f, 0.f, -0.f, 1.5f}) y.push_back(v);
  y.resize(size_t(n), 0.5f);
  auto ty = upload(*dev, DType::F32, {n}, y);
  check("asin", y, run("asin", ty), [](double v) { return std::asin(v); }, 4);
  check("acos", y, run("acos", ty), [](double v) { return std::acos(v); }, 4);
  check("atanh", y, run("atanh", ty), [](double v) { return std::atanh(v); }, 4);
  check("acos", x, run("acos", t), [](double v) { return std::acos(v); }, 4);
  check("erf_inv", y, run("erf_inv", ty), [](double v) {
    if (std::abs(v) > 1) return double(NAN);
    if (std::abs(v) == 1) return v * std::numeric_limits<double>::infinity();
    double a = std::abs(v), r = 0;
    for (int i = 0; i < 200; ++i)  // the residual through erfc near 1, through erf near 0
      r -= (a > 0.5 ? (1 - a) - std::erfc(r) : std::erf(r) - a) / (1.1283791670955126 * std::exp(-r * r));
    return v < 0 ? -r : (v == 0 ? v : r);
  }, 32);
  // Exact cubes and squares stay exact.
  auto c = run("cbrt", t);
  for (int64_t i = 0; i < n; ++i)
    if (x[i] == 27.f || x[i] == -8.f || x[i] == 0.125f) EXPECT_EQ(c[i], std::cbrt(x[i])) << x[i];
}

// sin, cos and tan of the floats nearest to k pi/2 (and their neighbours) below 8192, where the
// float reduction cancels most: these include the hardest cases of the range (252.898208 lies
// within 4.2e-9 of 161 pi/2), which a three-part pi/2 alone gets hundreds of ulps wrong.
TEST(Elementwise, TrigNearMultiplesOfHalfPiWithinFourUlp) {
  auto dev = shared_device();
  std::vector<float> x;
  for (int k = 1; k <= 5215; ++k) {
    float c = float(k * 1.57079632679489661923);
    for (float v : {std::nextafter(c, 0.f), c, std::nextafter(c, 1e9f)}) x.push_back(v), x.push_back(-v);
  }
  const int64_t n = int64_t(x.size());
  auto t = upload(*dev, DType::F32, {n}, x);
  for (const char* op : {"sin", "cos", "tan"}) {
    auto got = download<float>(*dev, run_op(*dev, op, {DType::F32, {n}}, {t}));
    uint64_t worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = double(x[size_t(i)]);
      double want = op[0] == 's' ? std::sin(v) : op[0] == 'c' ? std::cos(v) : std::tan(v);
      uint64_t d = ulp_distance(got[size_t(i)], float(want));
      worst = std::max(worst, d);
      ASSERT_LE(d, 4u) << op << "(" << x[size_t(i)] << ") = " << got[size_t(i)] << ", want " << float(want);
    }
    std::printf("  %s f32 near k pi/2: worst %llu ulp over %lld inputs\n", op, (unsigned long long)worst, (long long)n);
  }
}

TEST(Elementwise, ComplexMathMatchesStdComplex) {
  // c128 against std::complex (finite inputs; the fixtures cover Nx's own formulas), and the
  // sign of a complex number as z / |z| (Nx.BinaryBackend's is not defined: see fixtures README).
  auto dev = shared_device();
  std::vector<std::complex<double>> z = {{0.5, 0.25}, {-1.5, 2.0}, {3.0, -4.0}, {0.0, 1.0}, {-0.75, -0.5}};
  int64_t n = int64_t(z.size());
  auto t = upload(*dev, DType::C128, {n}, z);
  auto ex = download<std::complex<double>>(*dev, run_op(*dev, "exp", {DType::C128, {n}}, {t}));
  auto lg = download<std::complex<double>>(*dev, run_op(*dev, "log", {DType::C128, {n}}, {t}));
  auto sq = download<std::complex<double>>(*dev, run_op(*dev, "sqrt", {DType::C128, {n}}, {t}));
  auto sg = download<std::complex<double>>(*dev, run_op(*dev, "sign", {DType::C128, {n}}, {t}));
  for (size_t i = 0; i < z.size(); ++i) {
    EXPECT_NEAR(std::abs(ex[i] - std::exp(z[i])), 0.0, 1e-14 * std::abs(std::exp(z[i]))) << z[i];
    EXPECT_NEAR(std::abs(lg[i] - std::log(z[i])), 0.0, 1e-14 * std::abs(std::log(z[i])) + 1e-15) << z[i];
    EXPECT_NEAR(std::abs(sq[i] - std::sqrt(z[i])), 0.0, 1e-14 * std::abs(std::sqrt(z[i]))) << z[i];
    EXPECT_NEAR(std::abs(sg[i] - z[i] / std::abs(z[i])), 0.0, 1e-15) << z[i];
  }
}

TEST(Elementwise, F16AndBF16ComputeInF32) {
  auto dev = shared_device();
  std::vector<float> a = {1.f, 0.1f, 65504.f, -3.5f, 1e-7f}, b = {2.f, 0.2f, 65504.f, 0.25f, 1e-7f};
  std::vector<uint16_t> ha, hb;
  for (size_t i = 0; i < a.size(); ++i) {
    ha.push_back(f32_to_f16_bits(a[i]));
    hb.push_back(f32_to_f16_bits(b[i]));
  }
  auto ta = upload(*dev, DType::F16, {5}, ha), tb = upload(*dev, DType::F16, {5}, hb);
  auto out = download<uint16_t>(*dev, run_op(*dev, "add", {DType::F16, {5}}, {ta, tb}));
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], f32_to_f16_bits(f16_bits_to_f32(ha[i]) + f16_bits_to_f32(hb[i]))) << i;
  // bf16: Nx truncates the f32 result.
  auto bf = [](float f) { return uint16_t(std::bit_cast<uint32_t>(f) >> 16); };
  auto unbf = [](uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); };
  std::vector<uint16_t> ba, bb;
  for (size_t i = 0; i < a.size(); ++i) {
    ba.push_back(bf(a[i]));
    bb.push_back(bf(b[i]));
  }
  auto tba = upload(*dev, DType::BF16, {5}, ba), tbb = upload(*dev, DType::BF16, {5}, bb);
  auto bout = download<uint16_t>(*dev, run_op(*dev, "multiply", {DType::BF16, {5}}, {tba, tbb}));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bout[i], bf(unbf(ba[i]) * unbf(bb[i]))) << i;
}

// Dense f16 and bf16 operands 4-element aligned go through the four-wide path; the same values
// one element into a buffer go element by element. Both must agree bit for bit, also with a
// scalar operand splatted, and with a tail that is not a multiple of four.
TEST(Elementwise, SixteenBitFourWidePathAgreesWithTheElementPath) {
  auto dev = shared_device();
  ScopedTuning gpu_loops("gpu_paths", "1");  // the four-wide loop on CPU drivers too
  const int64_t n = 1031;
  std::mt19937 rng(7);
  for (DType type : {DType::F16, DType::BF16}) {
    std::vector<uint16_t> a(n + 1), b(n + 1);
    for (auto* v : {&a, &b})
      for (auto& x : *v) x = uint16_t(rng());  // every pattern: NaN, Inf, subnormals, -0.0
    auto ta = upload(*dev, type, {n + 1}, a), tb = upload(*dev, type, {n + 1}, b);
    Tensor a1 = slice_view(ta, {1}, {n}, {1}), b1 = slice_view(tb, {1}, {n}, {1});  // element path
    Tensor a4 = upload(*dev, type, {n}, std::vector<uint16_t>(a.begin() + 1, a.end()));  // four-wide
    Tensor b4 = upload(*dev, type, {n}, std::vector<uint16_t>(b.begin() + 1, b.end()));
    Tensor scalar = upload(*dev, type, {}, std::vector<uint16_t>{a[5]});
    auto same = [&](const std::vector<uint16_t>& wide, const std::vector<uint16_t>& elem, const std::string& what) {
      ASSERT_EQ(wide.size(), size_t(n));
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(wide[i], elem[i]) << what << " " << dtype_name(type) << " at " << i;
    };
    for (const char* op : {"add", "multiply", "divide", "max", "pow"}) {
      same(download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {a4, b4})),
           download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {a1, b1})), op);
      same(download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {scalar, b4})),
           download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {scalar, b1})), std::string(op) + " of a scalar");
    }
    for (const char* op : {"exp", "tanh", "negate", "sqrt"})
      same(download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {a4})),
           download<uint16_t>(*dev, run_op(*dev, op, {type, {n}}, {a1})), op);
  }
}

// Dense kernels on CPU drivers may loop one element per trip with the op inlined once
// (elementwise_one_wide: short ops, or all with ew.one_wide); the GPU's loops (four-wide trips, four elements a trip, the tail,
// sin/cos/tan's fast forms with the full op after them) must give the same bits. Random bit
// patterns: NaN, infinities, subnormals and huge trig arguments among them.
TEST(Elementwise, OneWideLoopAgreesWithTheGpuLoops) {
  auto dev = shared_device();
  const int64_t n = 1031;
  std::mt19937 rng(11);
  auto random_tensor = [&](DType t, const Shape& shape) {
    std::vector<std::byte> bytes(size_t(shape_size(shape)) * dtype_size(t));
    for (auto& b : bytes) b = std::byte(rng());
    return from_host(*dev, t, shape, bytes.data(), bytes.size());
  };
  // Bit for bit, but any NaN for a NaN (the two kernels may make NaNs differently).
  auto same = [&](DType t, const Tensor& x, const Tensor& y, const std::string& what) {
    auto a = to_host(*dev, x), b = to_host(*dev, y);
    size_t size = dtype_size(t), part = t == DType::C64 ? 4 : size;
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); i += part) {
      if (std::memcmp(&a[i], &b[i], part) == 0) continue;
      bool nans = false;
      if (part == 4 && (t == DType::F32 || t == DType::C64)) {
        float fa, fb;
        std::memcpy(&fa, &a[i], 4), std::memcpy(&fb, &b[i], 4);
        nans = std::isnan(fa) && std::isnan(fb);
      } else if (t == DType::F64) {
        double da, db;
        std::memcpy(&da, &a[i], 8), std::memcpy(&db, &b[i], 8);
        nans = std::isnan(da) && std::isnan(db);
      } else if (t == DType::F16 || t == DType::BF16) {
        uint16_t ha, hb;
        std::memcpy(&ha, &a[i], 2), std::memcpy(&hb, &b[i], 2);
        uint16_t e = t == DType::F16 ? 0x7c00 : 0x7f80;
        nans = (ha & e) == e && (ha & ~e & 0x7fff) && (hb & e) == e && (hb & ~e & 0x7fff);
      }
      ASSERT_TRUE(nans) << what << " at element " << i / size;
    }
  };
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::C64, DType::S32, DType::U8}) {
    if (!supports_op(*dev, "add", {t, {n}}, {t, t})) continue;
    Tensor x = random_tensor(t, {n}), y = random_tensor(t, {n}), s = random_tensor(t, {});
    std::vector<std::pair<const char*, std::vector<Tensor>>> cases = {
        {"add", {x, y}}, {"multiply", {x, s}}, {"subtract", {s, y}}, {"negate", {x}}};
    if (is_float(t) || is_complex(t))
      for (const char* op : {"sin", "cos", "tan", "exp", "sqrt"}) cases.push_back({op, {x}});
    if (is_float(t)) cases.push_back({"pow", {x, y}});
    for (const auto& [op, operands] : cases) {
      std::string what = std::string(op) + " " + std::string(dtype_name(t));
      Tensor one;
      {
        ScopedTuning one_wide("ew.one_wide", "1");  // every op one element a trip on CPU devices
        one = run_op(*dev, op, {t, {n}}, operands);
      }
      ScopedTuning gpu_loops("gpu_paths", "1");
      same(t, run_op(*dev, op, {t, {n}}, operands), one, what);
    }
  }
}

// sqrt of f32 rounds correctly (as Nx's f64 sqrt rounded to f32), cbrt within 1 ulp: every 61st
// bit pattern of the positive floats, subnormals and the largest included, against the host.
TEST(Elementwise, SqrtOfF32IsCorrectlyRoundedAndCbrtWithinOneUlp) {
  auto dev = shared_device();
  std::vector<float> x;
  for (uint64_t b = 1; b < 0x7F800000u; b += 61) x.push_back(std::bit_cast<float>(uint32_t(b)));
  x.push_back(std::bit_cast<float>(0x7F7FFFFFu));
  int64_t n = int64_t(x.size());
  auto got = download<float>(*dev, run_op(*dev, "sqrt", {DType::F32, {n}}, {upload(*dev, DType::F32, {n}, x)}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], std::sqrt(x[i])) << "sqrt(" << x[i] << ") bits " << std::bit_cast<uint32_t>(x[i]);
  // cbrt on the same inputs and their negatives: within 1 ulp of the double cube root rounded.
  auto neg = x;
  for (auto& v : neg) v = -v;
  auto tn = upload(*dev, DType::F32, {n}, neg);
  auto cb = download<float>(*dev, run_op(*dev, "cbrt", {DType::F32, {n}}, {tn}));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_LE(ulp_distance(cb[i], float(std::cbrt(double(neg[i])))), 1u) << "cbrt(" << neg[i] << ")";
}

// Nx.BinaryBackend compares integers with floats exactly, where converting either to the
// other's type would round (16777217 vs 16777216.0, 2^53 + 1 vs 2^53).
TEST(Elementwise, ComparisonsOfWideIntegersWithFloatsAreExact) {
  auto dev = shared_device();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<int64_t> i64 = {(1ll << 53) + 1, (1ll << 53) + 1, INT64_MAX, INT64_MIN, 3, -3, 0, 7, 5};
  std::vector<double> f64 = {9007199254740992.0, 9007199254740994.0, 9223372036854775808.0, -9223372036854775808.0,
                             2.5, -2.5, -0.0, NAN, inf};
  std::vector<int32_t> i32 = {16777217, -16777217, 16777216, INT32_MAX, 3, -3, 0, 7, 5};
  std::vector<float> f32 = {16777216.f, -16777216.f, 16777216.f, 2147483648.f, 3.f, -2.5f, -0.f, NAN, float(inf)};
  std::vector<uint64_t> u64 = {UINT64_MAX, UINT64_MAX - 1, 1ull << 63, 0, 3, 0, 0, 7, 5};
  int64_t n = int64_t(i64.size());
  auto check = [&](const Tensor& ti, const Tensor& tf, auto ints, auto floats, const char* what) {
    struct Cmp {
      const char* op;
      bool (*ref)(long double, long double);
    };
    for (Cmp c : {Cmp{"equal", [](long double x, long double y) { return x == y; }},
                  Cmp{"not_equal", [](long double x, long double y) { return x != y; }},
                  Cmp{"less", [](long double x, long double y) { return x < y; }},
                  Cmp{"greater_equal", [](long double x, long double y) { return x >= y; }}}) {
      auto ab = download<uint8_t>(*dev, run_op(*dev, c.op, {DType::U8, {n}}, {ti, tf}));
      auto ba = download<uint8_t>(*dev, run_op(*dev, c.op, {DType::U8, {n}}, {tf, ti}));
      for (int64_t k = 0; k < n; ++k) {
        // long double holds every int64 and every double exactly.
        long double x = (long double)ints[k], y = (long double)floats[k];
        EXPECT_EQ(ab[k], c.ref(x, y) ? 1 : 0) << what << " " << c.op << "(" << ints[k] << ", " << floats[k] << ")";
        EXPECT_EQ(ba[k], c.ref(y, x) ? 1 : 0) << what << " " << c.op << "(" << floats[k] << ", " << ints[k] << ")";
      }
    }
  };
  auto tf64 = upload(*dev, DType::F64, {n}, f64), tf32 = upload(*dev, DType::F32, {n}, f32);
  check(upload(*dev, DType::S64, {n}, i64), tf64, i64, f64, "s64/f64");
  check(upload(*dev, DType::S32, {n}, i32), tf32, i32, f32, "s32/f32");
  check(upload(*dev, DType::U64, {n}, u64), tf64, u64, f64, "u64/f64");
  check(upload(*dev, DType::U64, {n}, u64), tf32, u64, f32, "u64/f32");
}

// Complex.atan2 takes real-valued complex numbers (and raises on others): atan2 of the real
// parts; the engine gives NaN where an imaginary part is not zero.
TEST(Elementwise, ComplexAtan2OfRealValuedNumbers) {
  auto dev = shared_device();
  std::vector<std::complex<double>> y = {{1, 0}, {-1, 0}, {0, 0}, {3, 0.5}}, x = {{1, 0}, {-2, 0}, {-1, 0}, {1, 0}};
  auto ty = upload(*dev, DType::C128, {4}, y), tx = upload(*dev, DType::C128, {4}, x);
  auto r = download<std::complex<double>>(*dev, run_op(*dev, "atan2", {DType::C128, {4}}, {ty, tx}));
  for (int k = 0; k < 3; ++k) {
    EXPECT_LE(ulp_distance(r[k].real(), std::atan2(y[k].real(), x[k].real())), 1u) << k;
    EXPECT_EQ(r[k].imag(), 0.0) << k;
  }
  EXPECT_TRUE(std::isnan(r[3].real()) && std::isnan(r[3].imag()));
  std::vector<std::complex<float>> y32 = {{1, 0}, {-0.5f, 0}}, x32 = {{0, 0}, {-0.5f, 0}};
  auto r32 = download<std::complex<float>>(
      *dev, run_op(*dev, "atan2", {DType::C64, {2}}, {upload(*dev, DType::C64, {2}, y32), upload(*dev, DType::C64, {2}, x32)}));
  EXPECT_LE(ulp_distance(r32[0].real(), float(M_PI / 2)), 1u);
  EXPECT_LE(ulp_distance(r32[1].real(), float(-3 * M_PI / 4)), 1u);
}

TEST(Elementwise, AsTypeFollowsNx) {
  auto dev = shared_device();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1.9f, -1.9f, 300.f, -129.f, NAN, inf, -inf, 3e9f, -0.f, 1e20f};
  int64_t n = int64_t(x.size());
  auto t = upload(*dev, DType::F32, {n}, x);
  // Nx: truncate toward zero, keep the integer's low bits; NaN -> 0; +-Inf -> the extremes.
  auto u8 = download<uint8_t>(*dev, run_op(*dev, "as_type", {DType::U8, {n}}, {t}));
  auto s32 = download<int32_t>(*dev, run_op(*dev, "as_type", {DType::S32, {n}}, {t}));
  auto s64 = download<int64_t>(*dev, run_op(*dev, "as_type", {DType::S64, {n}}, {t}));
  std::vector<uint8_t> want_u8 = {1, 255, 44, 127, 0, 255, 0, 0, 0, 0};
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(u8[i], want_u8[i]) << "u8 of " << x[i];
  EXPECT_EQ(s32[0], 1);
  EXPECT_EQ(s32[1], -1);
  EXPECT_EQ(s32[4], 0);
  EXPECT_EQ(s32[5], INT32_MAX);
  EXPECT_EQ(s32[6], INT32_MIN);
  EXPECT_EQ(s32[7], int32_t(uint32_t(3000000000u)));
  EXPECT_EQ(s64[7], 3000000000ll);
  EXPECT_EQ(s64[9], int64_t(uint64_t(100000002004087734272.0L - 5.0L * 18446744073709551616.0L)));
  // int -> float and float -> float.
  auto ti = upload(*dev, DType::S64, {2}, std::vector<int64_t>{-5, 1ll << 53});
  auto f = download<double>(*dev, run_op(*dev, "as_type", {DType::F64, {2}}, {ti}));
  EXPECT_EQ(f[0], -5.0);
  EXPECT_EQ(f[1], 9007199254740992.0);
  auto h = download<uint16_t>(*dev, run_op(*dev, "as_type", {DType::F16, {n}}, {t}));
  EXPECT_EQ(h[2], f32_to_f16_bits(300.f));
  EXPECT_EQ(h[9], 0x7C00);  // overflow -> +Inf, as Erlang writes it
}

TEST(Elementwise, UnsupportedAndInvalidCallsAreClearErrors) {
  auto dev = shared_device();
  auto t = upload(*dev, DType::F32, {2}, std::vector<float>{1, 2});
  try {
    run_op(*dev, "no_such_op", {DType::F32, {2}}, {t});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
  try {
    run_op(*dev, "add", {DType::F32, {2}}, {t});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  Tensor freed = t;
  freed.buffer.reset();
  try {
    run_op(*dev, "exp", {DType::F32, {2}}, {freed});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Deallocated);
  }
  EXPECT_TRUE(supports_op(*dev, "add", {DType::C64, {2}}, {DType::C64, DType::C64}));
  EXPECT_FALSE(supports_op(*dev, "quotient", {DType::F32, {2}}, {DType::F32, DType::F32}));  // not in Nx
  EXPECT_FALSE(supports_op(*dev, "equal", {DType::F32, {2}}, {DType::F32, DType::F32}));     // Nx gives u8
  EXPECT_TRUE(supports_op(*dev, "add", {DType::F32, {2}}, {DType::F32, DType::S32}));
}

TEST(Elementwise, CapabilityMaskMakesF64Unsupported) {
  auto dev = Device::open({.disabled = kCapFloat64 | kCapInt64});
  auto t = upload(*dev, DType::F64, {2}, std::vector<double>{1, 2});
  EXPECT_FALSE(supports_op(*dev, "add", {DType::F64, {2}}, {DType::F64, DType::F64}));
  try {
    run_op(*dev, "add", {DType::F64, {2}}, {t, t});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("f64"), std::string::npos);
  }
  // f32 keeps working on the masked device.
  auto f = upload(*dev, DType::F32, {2}, std::vector<float>{1, 2});
  EXPECT_EQ(download<float>(*dev, run_op(*dev, "add", {DType::F32, {2}}, {f, f}))[1], 4.f);
}
