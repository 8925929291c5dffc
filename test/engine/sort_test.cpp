// sort and argsort (the sort family) on fresh random inputs against a host reference:
// std::stable_sort with Nx's order (NaN above +Inf and equal to every NaN, -0.0 equal to 0.0,
// descending the reverse with ties kept in input order), bit for bit. Every real type; values
// with many duplicates and the special floats; rows on both sides of the shared-memory limit
// and of the radix sort's tiles; first and middle axes; transposed inputs; empty and size-1 axes;
// the radix sort's shared-memory ranking (subgroup ops masked off).
#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <numeric>

#include "fixture.hpp"
#include "ops/sort/sort_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

class Sort : public DeviceTest {};

constexpr DType kSortTypes[] = {DType::U8,  DType::U16, DType::U32, DType::U64,  DType::S8,  DType::S16, DType::S32,
                                DType::S64, DType::F16, DType::BF16, DType::F32, DType::F64, DType::F8, DType::F8E4M3FN};

// A value as Nx orders it: NaN (all equal, above everything), or a number.
struct Ordered {
  bool nan = false;
  double f = 0;
  int64_t s = 0;
  uint64_t u = 0;
};

Ordered ordered(DType t, uint64_t bits) {
  Ordered o;
  size_t w = dtype_size(t) * 8;
  if (is_integer(t)) {
    if (is_signed(t)) o.s = w == 64 ? int64_t(bits) : int64_t(bits << (64 - w)) >> (64 - w);
    else o.u = bits;
    return o;
  }
  switch (t) {
    case DType::F16: o.f = double(std::bit_cast<_Float16>(uint16_t(bits))); break;
    case DType::BF16: o.f = double(std::bit_cast<float>(uint32_t(bits) << 16)); break;
    case DType::F32: o.f = double(std::bit_cast<float>(uint32_t(bits))); break;
    case DType::F64: o.f = std::bit_cast<double>(bits); break;
    case DType::F8: o.f = fixtures::f8_to_double(uint8_t(bits)); break;
    default: o.f = fixtures::f8e4m3fn_to_double(uint8_t(bits)); break;
  }
  o.nan = std::isnan(o.f);
  return o;
}

// a strictly before b in ascending order.
bool less(DType t, const Ordered& a, const Ordered& b) {
  if (is_integer(t)) return is_signed(t) ? a.s < b.s : a.u < b.u;
  if (a.nan) return false;
  if (b.nan) return true;
  return a.f < b.f;
}

// Raw bits of some values of `t` worth sorting: specials, a small pool (duplicates), random bits.
std::vector<uint64_t> sample_values(DType t, size_t count, std::mt19937_64& rng) {
  size_t w = dtype_size(t) * 8;
  uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1, sign = 1ull << (w - 1);
  std::vector<uint64_t> special{0, sign, mask, sign - 1, 1};
  switch (t) {
    case DType::F16: special.insert(special.end(), {0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x3C00}); break;
    case DType::BF16: special.insert(special.end(), {0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x3F80}); break;
    case DType::F32: special.insert(special.end(), {0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x3F800000}); break;
    case DType::F64:
      special.insert(special.end(), {0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000001});
      break;
    case DType::F8: special.insert(special.end(), {0x7C, 0xFC, 0x7E, 0xFF, 0x3C}); break;
    case DType::F8E4M3FN: special.insert(special.end(), {0x7F, 0xFF, 0x7E, 0xFE, 0x38}); break;
    default: break;
  }
  std::vector<uint64_t> pool(8);
  for (auto& p : pool) p = rng() & mask;
  std::vector<uint64_t> v(count);
  for (auto& x : v) {
    uint64_t r = rng() % 10;
    x = r == 0 ? special[rng() % special.size()] : r < 7 ? pool[rng() % pool.size()] : rng() & mask;
  }
  return v;
}

std::vector<std::byte> pack(DType t, const std::vector<uint64_t>& bits) {
  size_t b = dtype_size(t);
  std::vector<std::byte> out(bits.size() * b);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * b, &bits[i], b);  // little-endian
  return out;
}

uint64_t unpack(const std::vector<std::byte>& bytes, size_t b, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + i * b, b);
  return v;
}

struct SortCase {
  Shape shape;
  int64_t axis;
  bool transposed = false;  // the op sees the transpose of a stored {shape reversed} (rank 2)
};

// Row-major result of sort (`arg` false: the values' bits) or argsort (indices) along `axis`.
std::vector<uint64_t> reference(DType t, const std::vector<uint64_t>& x, const Shape& shape, int64_t axis, bool desc,
                                bool arg) {
  int64_t outer = 1, n = shape.empty() ? 1 : shape[size_t(axis)], inner = 1;
  for (int64_t a = 0; a < axis; ++a) outer *= shape[size_t(a)];
  for (size_t a = size_t(axis) + 1; a < shape.size(); ++a) inner *= shape[a];
  std::vector<uint64_t> out(x.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<Ordered> keys(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < n; ++k) keys[size_t(k)] = ordered(t, x[size_t((o * n + k) * inner + i)]);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return desc ? less(t, keys[size_t(b)], keys[size_t(a)]) : less(t, keys[size_t(a)], keys[size_t(b)]);
      });
      for (int64_t k = 0; k < n; ++k) {
        int64_t from = order[size_t(k)];
        out[size_t((o * n + k) * inner + i)] = arg ? uint64_t(from) : x[size_t((o * n + from) * inner + i)];
      }
    }
  return out;
}

// Runs one case; returns "" or what differs.
std::string run_case(Device& d, DType t, const SortCase& c, bool arg, bool desc, DType index_type,
                     std::mt19937_64& rng) {
  std::vector<uint64_t> x = sample_values(t, size_t(shape_size(c.shape)), rng);
  Tensor input;
  if (c.transposed) {
    Shape stored{c.shape[1], c.shape[0]};
    std::vector<uint64_t> s(x.size());
    for (int64_t i = 0; i < c.shape[0]; ++i)
      for (int64_t j = 0; j < c.shape[1]; ++j) s[size_t(j * c.shape[0] + i)] = x[size_t(i * c.shape[1] + j)];
    auto bytes = pack(t, s);
    input = transpose_view(from_host(d, t, stored, bytes.data(), bytes.size()), {1, 0});
  } else {
    auto bytes = pack(t, x);
    input = from_host(d, t, c.shape, bytes.data(), bytes.size());
  }
  SortAttrs a;
  a.axis = c.axis;
  a.descending = desc;
  a.stable = true;
  DType out_type = arg ? index_type : t;
  std::string what = std::string(arg ? "argsort" : "sort") + " " + std::string(dtype_name(t)) + " [";
  for (auto s : c.shape) what += std::to_string(s) + " ";
  what += "] axis " + std::to_string(c.axis) + (desc ? " desc" : " asc") + (c.transposed ? " transposed" : "");
  if (arg) what += " -> " + std::string(dtype_name(index_type));
  std::vector<std::byte> got;
  try {
    got = to_host(d, run_op(d, arg ? "argsort" : "sort", OutSpec{out_type, c.shape}, {input}, Attrs::of(a)));
  } catch (const std::exception& e) {
    return what + ": threw " + e.what() + "\n";
  }
  std::vector<uint64_t> want = reference(t, x, c.shape, c.axis, desc, arg);
  size_t b = dtype_size(out_type);
  uint64_t mask = b == 8 ? ~0ull : (1ull << (8 * b)) - 1;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (unpack(got, b, i) != (want[i] & mask) && bad++ == 0) first = i;
  if (!bad) return "";
  return what + ": " + std::to_string(bad) + " of " + std::to_string(want.size()) + " differ, first at " +
         std::to_string(first) + " (got " + std::to_string(unpack(got, b, first)) + ", want " +
         std::to_string(want[first] & mask) + ")\n";
}

// Shared-memory rows of every size class, layouts and edge shapes.
const std::vector<SortCase> kRowCases{{{4, 6}, 1},        {{7, 300}, 1}, {{33, 5}, 0},      {{3, 4, 5}, 1},
                                      {{40, 9}, 0, true}, {{2048}, 0},   {{5, 1}, 1},       {{3, 0}, 1},
                                      {{}, 0},            {{1}, 0},      {{9, 17}, 1, true}};
// Radix rows: one tile and a bit (lavapipe's tiles are 2048 keys), several rows, first axis,
// transposed.
const std::vector<SortCase> kRadixCases{{{2049}, 0}, {{3, 2100}, 1}, {{4100, 2}, 0}, {{2, 3000}, 1, true}};

TEST_F(Sort, EveryTypeMatchesTheHostReference) {
  Device& d = *device_;
  std::mt19937_64 rng(sample_seed());
  std::string failures;
  const DType index_types[] = {DType::S64, DType::S32, DType::U16};
  for (DType t : kSortTypes) {
    if (!check_op(d, OpId::sort, OutSpec{t, {4}}, std::vector<TensorSpec>{contiguous_spec(t, {4})},
                  Attrs::of(SortAttrs{})))
      continue;  // the device lacks the type's storage
    for (const auto& c : sample_cases(kRowCases, 5)) {
      bool arg = rng() % 2, desc = rng() % 2;
      failures += run_case(d, t, c, arg, desc, index_types[rng() % 3], rng);
    }
    const SortCase& c = kRadixCases[rng() % kRadixCases.size()];
    failures += run_case(d, t, c, rng() % 2, rng() % 2, DType::S64, rng);
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

TEST_F(Sort, EdgeShapesAndBothDirections) {
  Device& d = *device_;
  std::mt19937_64 rng(sample_seed() + 1);
  std::string failures;
  for (const auto& c : kRowCases)
    for (bool arg : {false, true}) failures += run_case(d, DType::F32, c, arg, rng() % 2, DType::S64, rng);
  EXPECT_TRUE(failures.empty()) << failures;
}

TEST_F(Sort, RadixRowsOfEveryKeyWidth) {
  Device& d = *device_;
  std::mt19937_64 rng(sample_seed() + 2);
  std::string failures;
  for (DType t : {DType::U8, DType::BF16, DType::S32, DType::F64}) {
    const SortCase& c = kRadixCases[rng() % kRadixCases.size()];
    failures += run_case(d, t, c, rng() % 2, rng() % 2, DType::S32, rng);
  }
  for (bool desc : {false, true})
    for (bool arg : {false, true}) failures += run_case(d, DType::F32, {{3, 2100}, 1}, arg, desc, DType::S32, rng);
  // More tiles than the serial tile scan takes (16 on lavapipe: 2048-key tiles).
  failures += run_case(d, DType::F32, {{40000}, 0}, true, false, DType::S64, rng);
  // More tiles than one step of the workgroup tile scan (1024): its carry.
  failures += run_case(d, DType::F32, {{2100000}, 0}, false, true, DType::S64, rng);
  // Smaller workgroups: an invocation scans 2 or 4 digits of the tile.
  for (const char* wg : {"128", "64"}) {
    ScopedTuning smaller("sort.radix_workgroup", wg);
    failures += run_case(d, DType::F32, {{3, 2100}, 1}, rng() % 2, rng() % 2, DType::S32, rng);
    failures += run_case(d, DType::S16, {{5000}, 0}, true, false, DType::S64, rng);
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

TEST_F(Sort, RadixRanksThroughSharedMemoryWithoutSubgroupOps) {
  std::shared_ptr<Device> plain = Device::open({.disabled = kCapSubgroupOps});
  std::mt19937_64 rng(sample_seed() + 3);
  std::string failures;
  for (bool arg : {false, true}) failures += run_case(*plain, DType::F32, {{2, 3000}, 1}, arg, rng() % 2, DType::S32, rng);
  failures += run_case(*plain, DType::S16, {{4100, 2}, 0}, true, true, DType::S64, rng);
  EXPECT_TRUE(failures.empty()) << failures;
}

// top_k: the first k of each row's stable descending argsort (Nx.Block.TopK's default), for every
// type, k = 1 to the row length, rows of 1 to kRowSortMax keys, a transposed input; rows beyond
// the shared-memory sort through the radix argsort (odd lengths, a transposed input, k = n).
TEST_F(Sort, TopKIsTheFirstKOfTheDescendingArgsort) {
  Device& d = *device_;
  std::mt19937_64 rng(sample_seed() + 4);
  std::string failures;
  struct TopCase {
    Shape shape;
    int64_t k;
    bool transposed;
  };
  const TopCase cases[] = {{{5, 17}, 1, false}, {{5, 17}, 17, false}, {{3, 4, 64}, 8, false}, {{9}, 4, false},
                           {{40, 33}, 5, true},  {{2, 2048}, 30, false}, {{300, 1}, 1, false}, {{7, 256}, 8, false},
                           {{3, 2049}, 7, false}, {{2, 4099}, 4099, false}, {{5, 3001}, 64, true}};
  for (DType t : kSortTypes) {
    if (!check_op(d, OpId::sort, OutSpec{t, {4}}, std::vector<TensorSpec>{contiguous_spec(t, {4})},
                  Attrs::of(SortAttrs{})))
      continue;
    for (const auto& c : cases) {
      std::vector<uint64_t> x = sample_values(t, size_t(shape_size(c.shape)), rng);
      Tensor input;
      if (c.transposed) {  // rank 2: stored as its transpose
        Shape stored{c.shape[1], c.shape[0]};
        std::vector<uint64_t> st(x.size());
        for (int64_t i = 0; i < c.shape[0]; ++i)
          for (int64_t j = 0; j < c.shape[1]; ++j) st[size_t(j * c.shape[0] + i)] = x[size_t(i * c.shape[1] + j)];
        auto bytes = pack(t, st);
        input = transpose_view(from_host(d, t, stored, bytes.data(), bytes.size()), {1, 0});
      } else {
        auto bytes = pack(t, x);
        input = from_host(d, t, c.shape, bytes.data(), bytes.size());
      }
      int64_t axis = int64_t(c.shape.size()) - 1, n = c.shape.back();
      SortAttrs a;
      a.k = c.k;
      Shape out = c.shape;
      out.back() = c.k;
      auto got = download<int32_t>(d, run_op(d, "top_k", OutSpec{DType::S32, out}, {input}, Attrs::of(a)));
      auto want = reference(t, x, c.shape, axis, true, true);
      for (int64_t i = 0; i < shape_size(out); ++i) {
        int64_t row = i / c.k, j = i % c.k;
        if (uint64_t(got[size_t(i)]) != want[size_t(row * n + j)]) {
          failures += "top_k " + std::string(dtype_name(t)) + " k=" + std::to_string(c.k) + " n=" +
                      std::to_string(n) + " element " + std::to_string(i) + "\n";
          break;
        }
      }
    }
  }
  EXPECT_TRUE(failures.empty()) << failures;
  Tensor long_rows = empty(d, DType::F32, {2, 2049});
  SortAttrs a;
  a.k = 3;
  EXPECT_TRUE(check_op(d, OpId::top_k, OutSpec{DType::S32, {2, 3}}, std::vector<TensorSpec>{spec_of(long_rows)},
                       Attrs::of(a)));
}

// Nx's order on the special floats, spelled out (one row, both directions).
TEST_F(Sort, SpecialFloatsInNxOrder) {
  Device& d = *device_;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x{1.0f, nan, -0.0f, -inf, 0.0f, inf, -1.0f, -nan, 0.0f, -0.0f};
  Tensor t = upload(d, DType::F32, {10}, x);
  SortAttrs a;
  auto bits = [](const std::vector<float>& v) {
    std::vector<uint32_t> b;
    for (float f : v) b.push_back(std::bit_cast<uint32_t>(f));
    return b;
  };
  auto got = download<float>(d, run_op(d, "sort", OutSpec{DType::F32, {10}}, {t}, Attrs::of(a)));
  EXPECT_EQ(bits(got), bits({-inf, -1.0f, -0.0f, 0.0f, 0.0f, -0.0f, 1.0f, inf, nan, -nan}));
  auto idx = download<int64_t>(d, run_op(d, "argsort", OutSpec{DType::S64, {10}}, {t}, Attrs::of(a)));
  EXPECT_EQ(idx, (std::vector<int64_t>{3, 6, 2, 4, 8, 9, 0, 5, 1, 7}));
  a.descending = true;
  idx = download<int64_t>(d, run_op(d, "argsort", OutSpec{DType::S64, {10}}, {t}, Attrs::of(a)));
  EXPECT_EQ(idx, (std::vector<int64_t>{1, 7, 5, 0, 2, 4, 8, 9, 6, 3}));
}

}  // namespace
