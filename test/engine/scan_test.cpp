// Cumulative ops (the reduce family's scans) on fresh random inputs against a host reference:
// long rows that cross the kernel's tiles, columns, both directions, a transposed view, on
// integer and float types. Values are small integers (products: +-1, 2), so sums and products
// are exact in every type tested and compared bit for bit.
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/reduce/reduce_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

class Scan : public DeviceTest {};

struct ScanCase {
  std::string name;
  Shape shape;
  int64_t axis;
  bool transposed = false;  // the op sees the transpose of a stored {shape reversed} tensor
};

// Integer sums and products wrap, as Nx's do (and C++'s signed ones must not).
template <class T>
T wrapping(T a, T b, bool product) {
  if constexpr (std::is_integral_v<T>)
    return T(product ? uint64_t(int64_t(a)) * uint64_t(int64_t(b)) : uint64_t(int64_t(a)) + uint64_t(int64_t(b)));
  else
    return product ? a * b : a + b;
}

template <class T>
std::vector<T> reference(const std::string& op, const std::vector<T>& x, const Shape& shape, int64_t axis, bool reverse) {
  int64_t outer = 1, n = shape[size_t(axis)], inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= shape[size_t(a)];
  for (size_t a = size_t(axis) + 1; a < shape.size(); ++a) inner *= shape[a];
  std::vector<T> out(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T acc{};
      for (int64_t k = 0; k < n; ++k) {
        int64_t r = reverse ? n - 1 - k : k;
        size_t at = size_t((o * n + r) * inner + i);
        T v = x[at];
        if (k == 0) acc = v;
        else if (op == "cumulative_sum") acc = wrapping(acc, v, false);
        else if (op == "cumulative_product") acc = wrapping(acc, v, true);
        else if (op == "cumulative_max") acc = std::max(acc, v);
        else acc = std::min(acc, v);
        out[at] = acc;
      }
    }
  return out;
}

template <class T>
void run_cases(Device& d, DType type, std::mt19937& rng, std::string& failures) {
  std::vector<ScanCase> cases{{"row_crossing_tiles", {3, 1029}, 1},
                              {"long_row", {5000}, 0},
                              {"columns", {37, 5, 9}, 1},
                              {"first_axis", {70, 6}, 0},
                              {"transposed", {9, 33}, 1, true},
                              // a subgroup per row: many rows, four-wide where n is a multiple of 4
                              {"many_rows_four_wide", {1030, 36}, 1},
                              {"many_rows_odd", {1025, 7}, 1},
                              {"short_rows_across_pieces", {4, 700}, 1}};
  std::uniform_int_distribution<int> small(-4, 4), pick(0, 15);
  for (const auto& c : cases)
    for (const char* op : {"cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min"})
      for (bool reverse : {false, true}) {
        std::string name = op;
        std::vector<T> x(size_t(shape_size(c.shape)));
        for (auto& v : x) {
          int k = pick(rng);
          v = name == "cumulative_product" ? T(k < 1 ? 2 : k < 9 ? 1 : -1) : T(small(rng));
        }
        Tensor input;
        if (c.transposed) {
          Shape stored{c.shape[1], c.shape[0]};
          std::vector<T> t(x.size());
          for (int64_t i = 0; i < c.shape[0]; ++i)
            for (int64_t j = 0; j < c.shape[1]; ++j) t[size_t(j * c.shape[0] + i)] = x[size_t(i * c.shape[1] + j)];
          input = transpose_view(upload(d, type, stored, t), {1, 0});
        } else {
          input = upload(d, type, c.shape, x);
        }
        CumulativeAttrs a;
        a.axis = c.axis;
        a.reverse = reverse;
        auto expected = reference(name, x, c.shape, c.axis, reverse);
        std::vector<T> got;
        try {
          got = download<T>(d, run_op(d, op, OutSpec{type, c.shape}, {input}, Attrs::of(a)));
        } catch (const std::exception& e) {
          failures += c.name + " " + name + ": threw " + e.what() + "\n";
          continue;
        }
        size_t bad = 0;
        for (size_t i = 0; i < x.size(); ++i) bad += std::memcmp(&got[i], &expected[i], sizeof(T)) != 0;
        if (bad)
          failures += std::string(dtype_name(type)) + " " + c.name + " " + name + (reverse ? " reverse" : "") + ": " +
                      std::to_string(bad) + " of " + std::to_string(x.size()) + " differ\n";
      }
}

TEST_F(Scan, CumulativeOpsMatchTheHostReferenceBitForBit) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed());
  std::string failures;
  run_cases<int32_t>(d, DType::S32, rng, failures);
  run_cases<uint8_t>(d, DType::U8, rng, failures);
  run_cases<float>(d, DType::F32, rng, failures);
  if (d.has(kCapFloat64)) run_cases<double>(d, DType::F64, rng, failures);  // f64 scans need f64
  EXPECT_TRUE(failures.empty()) << failures;
}

// Complex rows of a length divisible by four with a subgroup each (a vec2 element has no
// four-wide vector type: these rows take the one-wide loads).
TEST_F(Scan, ComplexRowsOfFoursMatchTheHostReference) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed());
  std::uniform_int_distribution<int> small(-3, 3), unit(0, 3);
  Shape shape{1030, 36};
  for (const char* op : {"cumulative_sum", "cumulative_product"}) {
    bool product = std::string(op) == "cumulative_product";
    std::vector<std::complex<float>> x(size_t(shape_size(shape)));
    // Products: powers of i (exact); sums: small integers.
    const std::complex<float> units[4] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    for (auto& v : x) v = product ? units[unit(rng)] : std::complex<float>(float(small(rng)), float(small(rng)));
    CumulativeAttrs a;
    a.axis = 1;
    auto got = download<std::complex<float>>(d, run_op(d, op, OutSpec{DType::C64, shape}, {upload(d, DType::C64, shape, x)},
                                                       Attrs::of(a)));
    size_t bad = 0;
    for (int64_t r = 0; r < shape[0]; ++r) {
      std::complex<float> acc;
      for (int64_t k = 0; k < shape[1]; ++k) {
        size_t at = size_t(r * shape[1] + k);
        acc = k == 0 ? x[at] : product ? acc * x[at] : acc + x[at];
        bad += got[at] != acc;
      }
    }
    EXPECT_EQ(bad, 0u) << op;
  }
}

}  // namespace
