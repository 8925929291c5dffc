// triangular_solve (ops/linalg) against a long-double substitution on the host: every option
// (left_side, lower, transform_a), vector and matrix right-hand sides, batches, complex and
// integer operands, transposed views, and systems straddling the workgroup's 64 invocations.
#include <complex>
#include <random>

#include "json_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

using cld = std::complex<long double>;

Attrs solve_attrs(bool left_side, bool lower, const std::string& transform) {
  return decode_attrs(OpId::triangular_solve,
                      JsonAttrReader(nlohmann::json{{"left_side", left_side}, {"lower", lower}, {"transform_a", transform}}));
}

struct Values {
  std::vector<cld> v;      // row-major
  std::vector<std::byte> bytes;
};

// Random values of `type` (diagonal entries of square matrices kept away from zero).
Values random_values(DType type, const Shape& shape, std::mt19937& rng, bool triangular_matrix) {
  std::uniform_real_distribution<double> u(-1, 1);
  int64_t count = shape_size(shape), n = shape.back();
  Values out;
  out.v.resize(size_t(count));
  out.bytes.resize(size_t(count) * dtype_size(type));
  for (int64_t i = 0; i < count; ++i) {
    double re = u(rng), im = u(rng);
    bool diagonal = triangular_matrix && (i / n) % n == i % n;
    if (diagonal) re += re < 0 ? -1.5 : 1.5;
    std::byte* p = out.bytes.data() + size_t(i) * dtype_size(type);
    switch (type) {
      case DType::C64: {
        float f[2] = {float(re), float(im)};
        std::memcpy(p, f, 8);
        out.v[size_t(i)] = cld(f[0], f[1]);
        break;
      }
      case DType::C128: {
        double d[2] = {re, im};
        std::memcpy(p, d, 16);
        out.v[size_t(i)] = cld(re, im);
        break;
      }
      case DType::S32: {
        int32_t k = int32_t(std::lround(re * 4));
        if (diagonal && k == 0) k = 3;
        std::memcpy(p, &k, 4);
        out.v[size_t(i)] = k;
        break;
      }
      case DType::F32: {
        float f = float(re);
        std::memcpy(p, &f, 4);
        out.v[size_t(i)] = f;
        break;
      }
      default:
        std::memcpy(p, &re, 8);
        out.v[size_t(i)] = re;
    }
  }
  return out;
}

// Nx's solution: M = op(A) (left) or op(A)^T (right), triangular as `lower` says after the
// transposition; each right-hand side solved by substitution.
std::vector<cld> reference(const std::vector<cld>& a, const std::vector<cld>& b, const Shape& a_shape,
                           const Shape& b_shape, bool left, bool lower, const std::string& transform) {
  int64_t n = a_shape.back(), batch_rank = int64_t(a_shape.size()) - 2, batches = 1;
  for (int64_t d = 0; d < batch_rank; ++d) batches *= a_shape[size_t(d)];
  bool vector = int64_t(b_shape.size()) == batch_rank + 1;
  int64_t rows = vector ? n : b_shape[b_shape.size() - 2], cols = vector ? 1 : b_shape.back();
  int64_t rhs = vector ? 1 : left ? cols : rows, rhs_stride = left ? 1 : cols, elem_stride = vector ? 1 : left ? cols : 1;
  bool transposed = (!left) != (transform == "transpose"), conj = transform == "conjugate";
  bool m_lower = lower != transposed;
  std::vector<cld> x(b.size());
  for (int64_t bz = 0; bz < batches; ++bz) {
    auto m = [&](int64_t i, int64_t j) {
      cld v = transposed ? a[size_t(bz * n * n + j * n + i)] : a[size_t(bz * n * n + i * n + j)];
      return conj ? std::conj(v) : v;
    };
    for (int64_t r = 0; r < rhs; ++r) {
      int64_t base = bz * rows * cols + r * rhs_stride;
      for (int64_t s = 0; s < n; ++s) {
        int64_t i = m_lower ? s : n - 1 - s;
        cld sum = 0;
        for (int64_t q = 0; q < s; ++q) {
          int64_t j = m_lower ? q : n - 1 - q;
          sum += m(i, j) * x[size_t(base + j * elem_stride)];
        }
        x[size_t(base + i * elem_stride)] = (b[size_t(base + i * elem_stride)] - sum) / m(i, i);
      }
    }
  }
  return x;
}

struct SolveCase {
  const char* name;
  Shape a, b;
};

void run_case(Device& dev, const SolveCase& c, DType a_type, DType b_type, DType out_type, bool left, bool lower,
              const std::string& transform, bool transposed_a, uint32_t seed) {
  SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(a_type)) + (left ? " left" : " right") +
               (lower ? " lower " : " upper ") + transform + (transposed_a ? " (a a transposed view)" : ""));
  std::mt19937 rng(seed);
  Values a = random_values(a_type, c.a, rng, true), b = random_values(b_type, c.b, rng, false);
  Tensor ta = from_host(dev, a_type, c.a, a.bytes.data(), a.bytes.size());
  std::vector<cld> a_logical = a.v;
  if (transposed_a) {  // the same logical matrix, stored transposed
    int64_t n = c.a.back(), batches = shape_size(c.a) / (n * n);
    std::vector<std::byte> t_bytes(a.bytes.size());
    size_t e = dtype_size(a_type);
    for (int64_t bz = 0; bz < batches; ++bz)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          std::memcpy(t_bytes.data() + size_t(bz * n * n + j * n + i) * e, a.bytes.data() + size_t(bz * n * n + i * n + j) * e, e);
    std::vector<int64_t> perm(c.a.size());
    for (size_t d = 0; d < perm.size(); ++d) perm[d] = int64_t(d);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    ta = transpose_view(from_host(dev, a_type, c.a, t_bytes.data(), t_bytes.size()), perm);
  }
  Tensor tb = from_host(dev, b_type, c.b, b.bytes.data(), b.bytes.size());
  Tensor x = run_op(dev, OpId::triangular_solve, {out_type, c.b}, {ta, tb}, solve_attrs(left, lower, transform));
  auto want = reference(a_logical, b.v, c.a, c.b, left, lower, transform);
  auto got = to_host(dev, x);
  double rounding = (out_type == DType::F32 || out_type == DType::C64) ? 0x1p-24 : 0x1p-52;
  for (size_t i = 0; i < want.size(); ++i) {
    std::complex<double> g = typed_value_at(out_type, got.data() + i * dtype_size(out_type));
    long double err = std::abs(cld(g.real(), g.imag()) - want[i]);
    long double bound = 4 * rounding * std::abs(want[i]) + 1e-12L * (1 + std::abs(want[i]));
    ASSERT_LE(err, bound) << "element " << i << ": got (" << g.real() << ", " << g.imag() << "), want ("
                          << double(want[i].real()) << ", " << double(want[i].imag()) << ")";
  }
}

}  // namespace

TEST(TriangularSolve, EveryOptionAgainstSubstitutionInLongDouble) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "triangular_solve needs f64 arithmetic";
  const SolveCase cases[] = {
      {"vector_5", {5, 5}, {5}},
      {"matrix_7x3", {7, 7}, {7, 3}},
      {"batched_vectors_2x3x4", {2, 3, 4, 4}, {2, 3, 4}},
      {"batched_matrices_2x6x2", {2, 6, 6}, {2, 6, 2}},
      {"straddles_the_workgroup_70x2", {70, 70}, {70, 2}},
      {"size_1", {1, 1}, {1, 3}},
  };
  uint32_t seed = sample_seed();
  for (const SolveCase& c : cases)
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (const char* transform : {"none", "transpose", "conjugate"}) {
          SolveCase rc = c;
          if (!left && c.b.size() == c.a.size()) std::swap(rc.b[rc.b.size() - 1], rc.b[rc.b.size() - 2]);
          run_case(*dev, rc, DType::F32, DType::F32, DType::F32, left, lower, transform, false, seed++);
          run_case(*dev, rc, DType::F64, DType::F64, DType::F64, left, lower, transform, lower, seed++);
          run_case(*dev, rc, DType::C64, DType::C64, DType::C64, left, lower, transform, false, seed++);
        }
  // Mixed and integer operands (Nx: the result is the floating type of both).
  run_case(*dev, cases[1], DType::S32, DType::F32, DType::F32, true, true, "none", false, seed++);
  run_case(*dev, cases[1], DType::F32, DType::C128, DType::C128, true, false, "transpose", true, seed++);
}

// A zero on the diagonal divides by zero on the device (the Elixir backend raises first).
TEST(TriangularSolve, ChecksItsRequest) {
  auto dev = shared_device();
  TensorSpec a = contiguous_spec(DType::F32, {3, 3}), b = contiguous_spec(DType::F32, {4});
  std::vector<TensorSpec> both{a, b};
  Support s = check_op(*dev, OpId::triangular_solve, {DType::F32, {4}}, both, solve_attrs(true, true, "none"));
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  TensorSpec rect = contiguous_spec(DType::F32, {3, 4});
  both = {rect, contiguous_spec(DType::F32, {3})};
  s = check_op(*dev, OpId::triangular_solve, {DType::F32, {3}}, both, solve_attrs(true, true, "none"));
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  both = {contiguous_spec(DType::F32, {3, 3}), contiguous_spec(DType::F32, {3})};
  s = check_op(*dev, OpId::triangular_solve, {DType::F16, {3}}, both, solve_attrs(true, true, "none"));
  EXPECT_FALSE(s);
}
