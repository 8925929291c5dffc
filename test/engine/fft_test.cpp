// fft and ifft (ops/fft) against a long-double DFT on the host: random complex and real rows,
// lengths that pad and truncate, prime and power-of-two lengths, the transformed axis first,
// last and in the middle, transposed inputs, and Nx's zeroing of components within eps.
#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "json_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

using cld = std::complex<long double>;

struct FftCase {
  const char* name;
  Shape shape;     // the input's (as stored; `perm` then views it)
  std::vector<int64_t> perm;  // empty: as stored
  int64_t axis, length;
};

Attrs fft_attrs(OpId op, int64_t length, int64_t axis, double eps) {
  return decode_attrs(op, JsonAttrReader(nlohmann::json{{"length", length}, {"axis", axis}, {"eps", eps}}));
}

// Element o (row-major over the output) of the transform of `x` (row-major over `shape`)
// along `axis`, padded or truncated to `n`.
cld reference_at(const std::vector<cld>& x, const Shape& shape, int64_t axis, int64_t n, bool inverse, int64_t o) {
  Shape out_shape = shape;
  out_shape[size_t(axis)] = n;
  auto c = coords(o, out_shape);
  int64_t k = c[size_t(axis)], len = std::min(shape[size_t(axis)], n);
  cld acc = 0;
  for (int64_t j = 0; j < len; ++j) {
    c[size_t(axis)] = j;
    long double angle = (inverse ? 2 : -2) * std::numbers::pi_v<long double> * ((j * k) % n) / n;
    acc += x[size_t(linear(c, shape))] * cld(std::cos(angle), std::sin(angle));
  }
  return inverse ? acc / (long double)n : acc;
}

void run_case(Device& dev, const FftCase& fc, DType in_type, DType out_type, bool inverse, uint32_t seed) {
  SCOPED_TRACE(std::string(fc.name) + (inverse ? " ifft " : " fft ") + std::string(dtype_name(in_type)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  bool complex_in = in_type == DType::C64 || in_type == DType::C128;
  int64_t count = shape_size(fc.shape);
  std::vector<cld> stored(static_cast<size_t>(count));
  std::vector<std::byte> bytes(static_cast<size_t>(count) * dtype_size(in_type));
  for (int64_t i = 0; i < count; ++i) {
    double re = u(rng), im = complex_in ? u(rng) : 0;
    std::byte* p = bytes.data() + size_t(i) * dtype_size(in_type);
    switch (in_type) {
      case DType::C64: {
        float v[2] = {float(re), float(im)};
        std::memcpy(p, v, 8), re = v[0], im = v[1];
        break;
      }
      case DType::C128: {
        double v[2] = {re, im};
        std::memcpy(p, v, 16);
        break;
      }
      case DType::F32: {
        float v = float(re);
        std::memcpy(p, &v, 4), re = v;
        break;
      }
      default:
        std::memcpy(p, &re, 8);
    }
    stored[size_t(i)] = cld(re, im);
  }
  Tensor t = from_host(dev, in_type, fc.shape, bytes.data(), bytes.size());
  // The logical input: the stored tensor through `perm`.
  Shape shape = fc.shape;
  std::vector<cld> x = stored;
  if (!fc.perm.empty()) {
    t = transpose_view(t, fc.perm);
    shape = t.shape;
    for (int64_t i = 0; i < count; ++i) {
      auto c = coords(i, shape);
      std::vector<int64_t> s(c.size());
      for (size_t d = 0; d < c.size(); ++d) s[size_t(fc.perm[d])] = c[d];
      x[size_t(i)] = stored[size_t(linear(s, fc.shape))];
    }
  }
  Shape out_shape = shape;
  out_shape[size_t(fc.axis)] = fc.length;
  OpId op = inverse ? OpId::ifft : OpId::fft;
  Tensor y = run_op(dev, op, {out_type, out_shape}, {t}, fft_attrs(op, fc.length, fc.axis, 1e-10));
  auto got = to_host(dev, y);
  long double scale = 0;  // the largest row's sum |x|: the DFT's error grows with it
  for (const cld& v : x) scale = std::max(scale, std::abs(v));
  scale *= std::min(shape[size_t(fc.axis)], fc.length);
  double rounding = out_type == DType::C64 ? 0x1p-24 : 0x1p-53;
  // c64 rows of a power of two from 64 compute in float: within log2(n) * 2^-22 of the row's
  // 2-norm (bounded by max |x| sqrt(len)) of the exact transform, as a float radix-2 FFT is.
  long double float_error = 0;
  if (out_type == DType::C64 && fc.length >= 64 && (fc.length & (fc.length - 1)) == 0) {
    long double largest = 0;
    for (const cld& v : x) largest = std::max(largest, std::abs(v));
    float_error = std::log2((long double)fc.length) * 0x1p-22L * largest *
                  std::sqrt((long double)std::min(shape[size_t(fc.axis)], fc.length));
  }
  // Every element of small results; of large ones (the host's O(n) per element adds up) the
  // first, the last and a random sample.
  int64_t total = shape_size(out_shape), len = std::min(shape[size_t(fc.axis)], fc.length);
  std::vector<int64_t> checked;
  if (total * len <= (int64_t(1) << 20)) {
    for (int64_t o = 0; o < total; ++o) checked.push_back(o);
  } else {
    checked = {0, total - 1};
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    for (int i = 0; i < 200; ++i) checked.push_back(pick(rng));
  }
  for (int64_t o : checked) {
    cld want = reference_at(x, shape, fc.axis, fc.length, inverse, o);
    std::complex<double> g = typed_value_at(out_type, got.data() + size_t(o) * dtype_size(out_type));
    for (int part = 0; part < 2; ++part) {
      long double w = part ? want.imag() : want.real();
      double v = part ? g.imag() : g.real();
      long double bound =
          rounding * std::abs(w) + 1e-14L * scale + float_error + (std::abs(w) <= 1e-10L ? 1e-10L : 0);
      ASSERT_LE(std::abs(v - w), bound) << "element " << o << (part ? " im" : " re") << ": got " << v << ", want "
                                        << double(w);
    }
  }
}

}  // namespace

TEST(Fft, AgainstALongDoubleDft) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "fft needs f64 arithmetic";
  const FftCase cases[] = {
      {"power_of_two_64", {64}, {}, 0, 64},
      {"prime_97", {97}, {}, 0, 97},
      {"padded_5_to_12", {3, 5}, {}, 1, 12},
      {"truncated_9_to_4", {2, 9}, {}, 1, 4},
      {"length_1", {4, 3}, {}, 1, 1},
      {"first_axis_of_three", {6, 4, 3}, {}, 0, 6},
      {"middle_axis_strided", {2, 10, 3}, {}, 1, 10},
      {"transposed_input", {7, 5}, {1, 0}, 1, 7},
      {"rows_across_workgroups_300x33", {300, 33}, {}, 1, 33},
      // Power-of-two lengths: the radix-2 kernel (a workgroup per row, shared memory).
      {"radix2_2048_padded_from_1500", {2, 1500}, {}, 1, 2048},
      {"radix2_many_rows_1000x8", {1000, 8}, {}, 1, 8},
      {"radix2_transposed_input", {32, 6}, {1, 0}, 1, 32},
      {"radix2_middle_axis_truncated", {3, 40, 5}, {}, 1, 32},
      {"radix2_length_2", {5, 2}, {}, 1, 2},
  };
  uint32_t seed = sample_seed();
  for (bool inverse : {false, true}) {
    for (const FftCase& c : cases) {
      run_case(*dev, c, DType::C64, DType::C64, inverse, seed++);
      run_case(*dev, c, DType::C128, DType::C128, inverse, seed++);
    }
    run_case(*dev, cases[1], DType::F32, DType::C64, inverse, seed++);
    run_case(*dev, cases[6], DType::F64, DType::C128, inverse, seed++);
    run_case(*dev, cases[10], DType::F32, DType::C64, inverse, seed++);
  }
  // Rows longer than shared memory holds: the radix-2 transform through a work buffer.
  const FftCase long_row{"radix2_4096_through_a_work_buffer", {4096}, {}, 0, 4096};
  for (bool inverse : {false, true}) run_case(*dev, long_row, DType::C64, DType::C64, inverse, seed++);
  {
    // Rows longer than shared memory holds on any device: blocks of 16 in shared memory, then
    // the global stages.
    ScopedTuning blocks("fft.shared_max", "16");
    for (size_t i : {0, 9, 10, 11, 12})
      for (bool inverse : {false, true}) {
        run_case(*dev, cases[i], DType::C64, DType::C64, inverse, seed++);
        run_case(*dev, cases[i], DType::C128, DType::C128, inverse, seed++);
      }
    run_case(*dev, cases[11], DType::F32, DType::C64, false, seed++);
  }
  {
    ScopedTuning global("fft.global", "1");
    for (size_t i : {0, 9, 10, 11, 12, 13})
      for (bool inverse : {false, true}) run_case(*dev, cases[i], DType::C128, DType::C128, inverse, seed++);
  }
  // Other lengths by Bluestein's algorithm: long rows by default (one prime, one with a
  // padded input), and forced on the short cases of every layout.
  if (dev->has(kCapInt64)) {
    const FftCase long_rows[] = {{"bluestein_prime_1009", {2, 1009}, {}, 1, 1009},
                                 {"bluestein_padded_700_to_1000", {3, 700}, {}, 1, 1000},
                                 {"bluestein_first_axis_300", {300, 3}, {}, 0, 300}};
    for (const FftCase& c : long_rows)
      for (bool inverse : {false, true}) {
        run_case(*dev, c, DType::C64, DType::C64, inverse, seed++);
        run_case(*dev, c, DType::C128, DType::C128, inverse, seed++);
      }
    ScopedTuning forced("fft.bluestein", "1");
    for (size_t i : {1, 2, 5, 6, 7, 8})
      for (bool inverse : {false, true}) run_case(*dev, cases[i], DType::C128, DType::C128, inverse, seed++);
    run_case(*dev, cases[1], DType::F32, DType::C64, false, seed++);
  }
  // The direct DFT at power-of-two lengths too.
  ScopedTuning dft("fft.dft", "1");
  for (size_t i : {0, 11, 12})
    for (bool inverse : {false, true}) run_case(*dev, cases[i], DType::C64, DType::C64, inverse, seed++);
}

// c64 rows of powers of two in float (fft_pow2_f32.comp), on devices with or without f64: long
// and many rows, rows longer than a workgroup holds, real and complex inputs, transposed views,
// forward and inverse; the double transform of the same rows (fft.c64_in_double) against the
// same bound.
TEST(Fft, C64RowsInFloatAgainstALongDoubleDft) {
  auto dev = shared_device();
  const FftCase cases[] = {
      {"float_64", {64}, {}, 0, 64},
      {"float_1024_rows_of_256", {1024, 256}, {}, 1, 256},
      {"float_2048_padded_from_1500", {2, 1500}, {}, 1, 2048},
      {"float_128_truncated_first_axis", {200, 3}, {}, 0, 128},
      {"float_transposed_512", {512, 3}, {1, 0}, 1, 512},
      {"float_37_rows_of_64_a_partial_batch", {37, 64}, {}, 1, 64},
      // Rows longer than a workgroup holds (lavapipe's 2048, an H200's 4096): two launches.
      {"float_long_rows_of_8192", {3, 8192}, {}, 1, 8192},
      {"float_long_first_axis_4096", {4096, 3}, {}, 0, 4096},
      {"float_long_transposed_4096", {4096, 2}, {1, 0}, 1, 4096},
  };
  uint32_t seed = sample_seed();
  for (bool inverse : {false, true})
    for (const FftCase& c : cases) {
      run_case(*dev, c, DType::C64, DType::C64, inverse, seed++);
      run_case(*dev, c, DType::F32, DType::C64, inverse, seed++);
    }
  {
    // A smaller workgroup (MAX_N 512): another first radix, batches of 8, 4 and 1 rows.
    ScopedTuning smaller("fft.shared_max", "512");
    for (size_t i : {0, 3, 4, 5}) run_case(*dev, cases[i], DType::C64, DType::C64, i % 2 == 0, seed++);
  }
  for (const char* radix : {"8", "4"}) {
    // Smaller radices, more invocations: other first radices and more passes.
    ScopedTuning smaller("fft.radix", radix);
    for (size_t i : {1, 2, 5}) run_case(*dev, cases[i], DType::C64, DType::C64, i == 2, seed++);
  }
  if (dev->has(kCapFloat64)) {
    ScopedTuning in_double("fft.c64_in_double", "1");
    for (const FftCase& c : cases) run_case(*dev, c, DType::C64, DType::C64, false, seed++);
  }
}

// Components within eps of zero are stored as exact zeros: the transform of a constant row.
TEST(Fft, ComponentsWithinEpsAreZero) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "fft needs f64 arithmetic";
  Tensor ones = upload(*dev, DType::F32, {6}, std::vector<float>(6, 1.f));
  Tensor y = run_op(*dev, OpId::fft, {DType::C64, {6}}, {ones}, fft_attrs(OpId::fft, 6, 0, 1e-10));
  auto got = download<std::complex<float>>(*dev, y);
  EXPECT_EQ(got[0], std::complex<float>(6, 0));
  for (size_t k = 1; k < 6; ++k) {
    EXPECT_EQ(std::bit_cast<uint32_t>(got[k].real()), 0u) << k;
    EXPECT_EQ(std::bit_cast<uint32_t>(got[k].imag()), 0u) << k;
  }
}

// Wrong output shapes and axes are InvalidArgument; devices without f64 say why they decline.
TEST(Fft, ChecksItsRequest) {
  auto dev = shared_device();
  TensorSpec in = contiguous_spec(DType::C64, {3, 4});
  Support s = check_op(*dev, OpId::fft, {DType::C64, {3, 5}}, {&in, 1}, fft_attrs(OpId::fft, 6, 1, 0));
  EXPECT_FALSE(s);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  s = check_op(*dev, OpId::fft, {DType::C64, {3, 4}}, {&in, 1}, fft_attrs(OpId::fft, 4, 2, 0));
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  TensorSpec real = contiguous_spec(DType::F32, {4});
  s = check_op(*dev, OpId::fft, {DType::F32, {4}}, {&real, 1}, fft_attrs(OpId::fft, 4, 0, 0));
  EXPECT_FALSE(s);
}

// Real and integer inputs of every width are read as x + 0i (Nx hands them over as they are).
TEST(Fft, RealAndIntegerInputs) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "fft needs f64 arithmetic";
  const std::vector<double> row{1, 1, 1, 0, 1, 1};
  const std::complex<float> want[] = {{5, 0}, {1, 0}, {-1, 0}, {1, 0}, {-1, 0}, {1, 0}};
  for (DType t : {DType::U8, DType::S16, DType::S32, DType::S64, DType::F16, DType::BF16, DType::F64}) {
    if ((t == DType::S64 && !dev->has(kCapInt64)) || (t == DType::F16 && !dev->has(kCapFloat16))) continue;
    SCOPED_TRACE(std::string(dtype_name(t)));
    std::vector<std::byte> bytes(row.size() * dtype_size(t));
    for (size_t i = 0; i < row.size(); ++i) {
      std::byte* p = bytes.data() + i * dtype_size(t);
      if (is_integer(t)) {
        int64_t v = int64_t(row[i]);
        std::memcpy(p, &v, dtype_size(t));  // little-endian: the low bytes
      } else {
        store_real(t, row[i], p);
      }
    }
    Tensor x = from_host(*dev, t, {6}, bytes.data(), bytes.size());
    Tensor y = run_op(*dev, OpId::fft, {DType::C64, {6}}, {x}, fft_attrs(OpId::fft, 6, 0, 1e-10));
    auto got = download<std::complex<float>>(*dev, y);
    for (size_t k = 0; k < 6; ++k) {
      EXPECT_NEAR(got[k].real(), want[k].real(), 1e-6) << k;
      EXPECT_NEAR(got[k].imag(), want[k].imag(), 1e-6) << k;
    }
  }
}
