// Shared by the dot tests: the cases, operand layouts, and run_case (the host reference).
#pragma once

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ops/dot/dot_attrs.hpp"
#include "test_util.hpp"

namespace nxv::test {


// Element offsets (row-major over `shape`) of every index of `axes`, in row-major order of them.
inline std::vector<int64_t> offsets(const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<int64_t> pitch = row_major_strides(shape);
  std::vector<int64_t> out{0};
  for (int64_t a : axes) {
    std::vector<int64_t> next;
    for (int64_t o : out)
      for (int64_t i = 0; i < shape[size_t(a)]; ++i) next.push_back(o + i * pitch[size_t(a)]);
    out = std::move(next);
  }
  return out;
}

inline std::vector<int64_t> free_of(size_t rank, const std::vector<int64_t>& c, const std::vector<int64_t>& b) {
  std::vector<int64_t> f;
  for (int64_t a = 0; a < int64_t(rank); ++a)
    if (std::find(c.begin(), c.end(), a) == c.end() && std::find(b.begin(), b.end(), a) == b.end()) f.push_back(a);
  return f;
}

// An operand's physical layout: 0 row-major; 1 stored with its last two axes swapped and
// handed over as a transposed view; 2 a broadcast of its axis 0 (stored with extent 1); 3 rows
// padded by 2 elements (a slice of a wider tensor: the row pitch is not the row length).
enum View { kDense = 0, kTransposed = 1, kBroadcast0 = 2, kPaddedRows = 3 };

struct DotCase {
  std::string name;
  Shape left, right;
  DotAttrs attrs;
  View left_view = kDense, right_view = kDense;
};

inline DotAttrs axes(std::vector<int64_t> lc, std::vector<int64_t> lb, std::vector<int64_t> rc, std::vector<int64_t> rb) {
  return DotAttrs{std::move(lc), std::move(lb), std::move(rc), std::move(rb)};
}

inline std::vector<DotCase> dot_cases() {
  DotAttrs mm = axes({1}, {}, {0}, {});
  return {
      {"matmul_1x1x1", {1, 1}, {1, 1}, mm},
      {"matmul_prime_37x41x43", {37, 41}, {41, 43}, mm},
      {"matmul_tile_edges_65x17x129", {65, 17}, {17, 129}, mm},
      {"matmul_tile_edges_65x17x132", {65, 17}, {17, 132}, mm},
      {"matmul_130x260x72", {130, 260}, {260, 72}, mm},
      {"vector_dot_1000", {1000}, {1000}, axes({0}, {}, {0}, {})},
      {"matvec_m1_300x70", {300}, {300, 70}, axes({0}, {}, {0}, {})},
      {"matvec_n1_70x300", {70, 300}, {300}, axes({1}, {}, {0}, {})},
      {"vector_times_matrix_300x72", {300}, {300, 72}, axes({0}, {}, {0}, {})},
      {"matvec_m1_transposed_b", {300}, {300, 70}, axes({0}, {}, {0}, {}), kDense, kTransposed},
      {"batched_3x5x7x9", {3, 5, 7}, {3, 7, 9}, axes({2}, {0}, {1}, {0})},
      {"batched_one_1x4x6x5", {1, 4, 6}, {1, 6, 5}, axes({2}, {0}, {1}, {0})},
      {"batch_axis_in_middle", {4, 2, 5}, {2, 5, 3}, axes({2}, {1}, {1}, {0})},
      {"two_contract_axes", {2, 3, 4}, {4, 2}, axes({2, 0}, {}, {0, 1}, {})},
      {"contract_apart_copied", {6, 5, 7}, {6, 7, 3}, axes({0, 2}, {}, {0, 1}, {})},
      {"outer_3x4", {3}, {4}, axes({}, {}, {}, {})},
      {"scalar_times_3x2", {}, {3, 2}, axes({}, {}, {}, {})},
      {"k0_3x0x4", {3, 0}, {0, 4}, mm},
      {"empty_m_0x5x3", {0, 5}, {5, 3}, mm},
      {"transposed_a_33x20x18", {33, 20}, {20, 18}, mm, kTransposed},
      {"transposed_both_24x40x31", {24, 40}, {40, 31}, mm, kTransposed, kTransposed},
      {"broadcast_a_9x12x10", {9, 12}, {12, 10}, mm, kBroadcast0},
      {"padded_rows_a_21x6x36", {21, 6}, {6, 36}, mm, kPaddedRows},
  };
}

inline const DType kAllTypes[] = {DType::U8,  DType::S8,  DType::U16,  DType::S16, DType::U32, DType::S32, DType::U64,
                           DType::S64, DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};

struct TypeCase {
  DType left, right, out;
};

inline std::string describe(const DotCase& c, const TypeCase& t) {
  auto list = [](const std::vector<int64_t>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out + "]";
  };
  std::ostringstream s;
  s << c.name << " " << dtype_name(t.left) << list(c.left) << (c.left_view ? "(view)" : "") << " x "
    << dtype_name(t.right) << list(c.right) << (c.right_view ? "(view)" : "") << " -> " << dtype_name(t.out)
    << " contract " << list(c.attrs.left_contract) << "/" << list(c.attrs.right_contract) << " batch "
    << list(c.attrs.left_batch) << "/" << list(c.attrs.right_batch);
  return s.str();
}

// Uploads an operand of logical shape `shape` in layout `view`; returns the tensor handed to
// dot and its logical row-major bytes.
inline std::pair<Tensor, std::vector<std::byte>> make_operand(Device& dev, DType t, const Shape& shape, View view,
                                                       std::mt19937& rng) {
  Shape stored = shape;
  if (view == kTransposed && shape.size() >= 2) std::swap(stored[shape.size() - 2], stored[shape.size() - 1]);
  if (view == kBroadcast0 && !shape.empty()) stored[0] = 1;
  if (view == kPaddedRows && !shape.empty()) stored.back() += 2;
  auto bytes = random_typed_values(t, size_t(shape_size(stored)), rng);
  Tensor x = from_host(dev, t, stored, bytes.data(), bytes.size());
  if (view == kTransposed && shape.size() >= 2) {
    std::vector<int64_t> perm(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
    std::swap(perm[shape.size() - 2], perm[shape.size() - 1]);
    x = transpose_view(x, perm);
  }
  if (view == kBroadcast0 && !shape.empty()) x = broadcast_view(x, shape);
  if (view == kPaddedRows && !shape.empty())
    x = slice_view(x, std::vector<int64_t>(shape.size(), 0), shape, std::vector<int64_t>(shape.size(), 1));
  if (x.size() == 0) return {x, {}};
  return {x, to_host(dev, x)};
}

// eps_acc: the accumulator's rounding per addition (0: f32's, or f64's for f64 outputs).
// eps_product: a further error allowed per product, relative to sum |x| |y| (a reduced-precision mode).
inline void run_case(Device& dev, const DotCase& c, const TypeCase& types, uint32_t seed, double eps_acc_given = 0,
              double eps_product = 0) {
  SCOPED_TRACE(describe(c, types));
  std::mt19937 rng(seed);
  auto [left, lbytes] = make_operand(dev, types.left, c.left, c.left_view, rng);
  auto [right, rbytes] = make_operand(dev, types.right, c.right, c.right_view, rng);
  const DotAttrs& a = c.attrs;
  std::vector<int64_t> lf = free_of(c.left.size(), a.left_contract, a.left_batch);
  std::vector<int64_t> rf = free_of(c.right.size(), a.right_contract, a.right_batch);
  Shape out_shape;
  for (int64_t x : a.left_batch) out_shape.push_back(c.left[size_t(x)]);
  for (int64_t x : lf) out_shape.push_back(c.left[size_t(x)]);
  for (int64_t x : rf) out_shape.push_back(c.right[size_t(x)]);
  OutSpec out{types.out, out_shape};
  Tensor result = run_op(dev, "dot", out, {left, right}, Attrs::of(a));
  ASSERT_EQ(result.shape, out_shape);
  if (result.size() == 0) return;
  std::vector<std::byte> got = to_host(dev, result);

  auto lb = offsets(c.left, a.left_batch), lm = offsets(c.left, lf), lk = offsets(c.left, a.left_contract);
  auto rb = offsets(c.right, a.right_batch), rn = offsets(c.right, rf), rk = offsets(c.right, a.right_contract);
  size_t lsize = dtype_size(types.left), rsize = dtype_size(types.right), osize = dtype_size(types.out);
  double eps_acc = types.out == DType::F64 || types.out == DType::C128 ? 0x1p-53 : 0x1p-24;
  if (eps_acc_given > 0) eps_acc = eps_acc_given;
  size_t K = lk.size(), failures = 0;
  for (size_t b = 0; b < lb.size(); ++b)
    for (size_t m = 0; m < lm.size(); ++m)
      for (size_t n = 0; n < rn.size(); ++n) {
        size_t o = (b * lm.size() + m) * rn.size() + n;
        const std::byte* g = got.data() + o * osize;
        std::string where = "output " + std::to_string(o);
        if (is_integer(types.out)) {
          uint64_t acc = 0;
          for (size_t k = 0; k < K; ++k)
            acc += int_at(types.left, lbytes.data() + size_t(lb[b] + lm[m] + lk[k]) * lsize) *
                   int_at(types.right, rbytes.data() + size_t(rb[b] + rn[n] + rk[k]) * rsize);
          uint64_t want = 0, have = 0;
          std::memcpy(&want, &acc, osize);
          std::memcpy(&have, g, osize);
          if (want != have && failures++ < 5) ADD_FAILURE() << where << ": got " << have << ", expected " << want;
          continue;
        }
        std::complex<double> acc = 0;
        double mag = 0;
        for (size_t k = 0; k < K; ++k) {
          auto x = typed_value_at(types.left, lbytes.data() + size_t(lb[b] + lm[m] + lk[k]) * lsize);
          auto y = typed_value_at(types.right, rbytes.data() + size_t(rb[b] + rn[n] + rk[k]) * rsize);
          acc += x * y;
          mag += std::abs(x) * std::abs(y);
        }
        std::complex<double> have = typed_value_at(types.out, g);
        double slack = is_complex(types.out) ? 2.0 : 1.0;
        // Below the output type's normal range its rounding errs by up to half its smallest
        // subnormal, which a relative bound misses (f16 results near 1e-5).
        double tiny = types.out == DType::F16 ? 0x1p-25 : types.out == DType::BF16 ? 0x1p-134 : 0.0;
        double tol_re = type_epsilon(types.out) * std::abs(acc.real()) + slack * double(K + 2) * eps_acc * mag +
                        eps_product * mag + tiny;
        double tol_im = type_epsilon(types.out) * std::abs(acc.imag()) + slack * double(K + 2) * eps_acc * mag +
                        eps_product * mag + tiny;
        bool ok = std::abs(have.real() - acc.real()) <= tol_re && std::abs(have.imag() - acc.imag()) <= tol_im;
        if (!ok && failures++ < 5)
          ADD_FAILURE() << where << ": got " << have << ", expected " << acc << " (tolerance " << tol_re << ")";
      }
  if (failures > 5) ADD_FAILURE() << failures << " outputs differ in all";
}

class Dot : public DeviceTest {
 protected:
  bool supported(const TypeCase& t) {
    TensorSpec specs[] = {contiguous_spec(t.left, {2, 2}), contiguous_spec(t.right, {2, 2})};
    return bool(check_op(*device_, *find_op("dot"), {t.out, {2, 2}}, specs, Attrs::of(axes({1}, {}, {0}, {}))));
  }
};

}  // namespace nxv::test
