// The reduce family on fresh random inputs: every reduction op on every real type, over
// layouts that take each path (rows shared by many invocations, columns, rows cut into chunks
// with a second pass, axes that do not collapse, transposed and broadcast views, empty and
// size-1 axes), compared bit for bit with a host reference. Float inputs are small integers
// (and NaN, infinities, -0.0 for max/min/arg), so every f32 sum is exact and the expected
// bits are those of the exact result rounded once to the output type.
#include <bit>
#include <cstring>
#include <limits>
#include <sstream>

#include "ops/reduce/reduce_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

double real_at(DType t, const std::byte* p) {
  switch (t) {
    case DType::F16: { uint16_t h; std::memcpy(&h, p, 2); return f16_bits_to_f32(h); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, p, 2); return std::bit_cast<float>(uint32_t(h) << 16); }
    case DType::F32: { float f; std::memcpy(&f, p, 4); return f; }
    default: { double d; std::memcpy(&d, p, 8); return d; }
  }
}

void put_real(DType t, double v, std::byte* p) {
  switch (t) {
    case DType::F16: { uint16_t h = f32_to_f16_bits(float(v)); std::memcpy(p, &h, 2); break; }
    case DType::BF16: { uint16_t h = uint16_t(std::bit_cast<uint32_t>(float(v)) >> 16); std::memcpy(p, &h, 2); break; }
    case DType::F32: { float f = float(v); std::memcpy(p, &f, 4); break; }
    default: std::memcpy(p, &v, 8);
  }
}

struct Layout {
  std::string name;
  Shape shape;                 // of the tensor handed to the op
  std::vector<int64_t> axes;   // reduced (empty with all = true: every axis)
  bool all = false;
  int view = 0;                // 0: contiguous; 1: transpose of the reversed shape; 2: broadcast of axis 0
};

std::vector<Layout> layouts() {
  return {
      {"scalar", {}, {}, true},
      {"all_257", {257}, {}, true},
      {"all_70000_two_passes", {70000}, {}, true},
      {"rows_3x257", {3, 257}, {1}},
      {"rows_4x4100", {4, 4100}, {1}},
      {"columns_300x5", {300, 5}, {0}},
      {"columns_70000x3_two_passes", {70000, 3}, {0}},
      {"columns_1000x40", {1000, 40}, {0}},
      {"columns_150x9", {150, 9}, {0}},
      {"transposed_columns_300x7", {300, 7}, {0}, false, 1},
      {"middle_4x33x5", {4, 33, 5}, {1}},
      {"apart_2x3x4_axes_0_2", {2, 3, 4}, {0, 2}},
      {"size1_1x1", {1, 1}, {1}},
      {"empty_axis_5x0x3", {5, 0, 3}, {1}},
      {"transposed_40x6", {40, 6}, {1}, false, 1},
      {"broadcast_7x50_axis_0", {7, 50}, {0}, false, 2},
  };
}

const DType kTypes[] = {DType::U8,  DType::S8,  DType::U16, DType::S16, DType::U32, DType::S32,
                        DType::U64, DType::S64, DType::F16, DType::BF16, DType::F32, DType::F64};
const OpId kOps[] = {OpId::sum, OpId::product, OpId::reduce_max, OpId::reduce_min,
                     OpId::all, OpId::any,     OpId::argmax,     OpId::argmin};

DType out_type(OpId op, DType in) {
  if (op == OpId::all || op == OpId::any) return DType::U8;
  if (op == OpId::argmax || op == OpId::argmin) return DType::S64;
  if (op == OpId::sum || op == OpId::product) {
    if (in == DType::U64 || in == DType::S64) return in;
    if (is_integer(in)) return is_signed(in) ? DType::S32 : DType::U32;
  }
  return in;
}

// Values: small integers (ones and minus ones mostly for products, only those in long rows,
// where powers of two would overflow f32 on the way); for max/min/arg, integers over their
// whole range and floats with infinities, signed zeros and about two NaNs per tensor.
std::vector<std::byte> random_input(OpId op, DType t, size_t n, std::mt19937& rng) {
  std::vector<std::byte> out(n * dtype_size(t));
  std::uniform_int_distribution<int> small(-8, 8), pick(0, 15);
  std::uniform_int_distribution<size_t> nan_pick(0, n);
  bool extreme = op == OpId::reduce_max || op == OpId::reduce_min || op == OpId::argmax || op == OpId::argmin;
  bool logical = op == OpId::all || op == OpId::any;
  for (size_t i = 0; i < n; ++i) {
    std::byte* p = out.data() + i * dtype_size(t);
    int k = pick(rng);
    if (op == OpId::product && n > 1000 && k < 2) k = 2;
    if (is_integer(t)) {
      uint64_t v = extreme && k < 6     ? (uint64_t(rng()) << 32 | rng())
                   : op == OpId::product ? uint64_t(int64_t(k < 2 ? 2 : k < 9 ? 1 : -1))
                   : logical            ? uint64_t(k < 14 ? 1 : 0)
                                        : uint64_t(int64_t(small(rng)));
      if (!is_signed(t) && !extreme) v &= 0x7f;
      std::memcpy(p, &v, dtype_size(t));
      continue;
    }
    double v = op == OpId::product ? (k < 1 ? 2.0 : k < 2 ? 0.5 : k < 9 ? 1.0 : -1.0)
               : logical           ? (k < 14 ? 1.5 : k < 15 ? 0.0 : -0.0)
                                   : double(small(rng));
    if (extreme && k == 1) v = (pick(rng) & 1) ? INFINITY : -INFINITY;
    if (extreme && k == 2) v = -0.0;
    if (extreme && nan_pick(rng) < 2) v = std::numeric_limits<double>::quiet_NaN();
    put_real(t, v, p);
  }
  return out;
}

// Nx's answer for one row of values (in order).
void reference_row(OpId op, DType in, DType out, const std::vector<const std::byte*>& row, std::byte* dst) {
  size_t n = row.size();
  if (op == OpId::all || op == OpId::any) {
    bool all = true, any = false;
    for (auto* p : row) {
      bool nz = is_integer(in) ? int_at(in, p) != 0 : real_at(in, p) != 0.0;
      all = all && nz, any = any || nz;
    }
    uint8_t v = op == OpId::all ? all : any;
    std::memcpy(dst, &v, 1);
    return;
  }
  if (op == OpId::argmax || op == OpId::argmin) {
    bool max = op == OpId::argmax;
    int64_t best = -1;
    for (size_t i = 0; i < n; ++i) {
      if (best < 0) { best = int64_t(i); continue; }
      if (is_integer(in)) {
        uint64_t a = int_at(in, row[i]), b = int_at(in, row[size_t(best)]);
        bool better = is_signed(in) ? (max ? int64_t(a) > int64_t(b) : int64_t(a) < int64_t(b)) : (max ? a > b : a < b);
        if (better) best = int64_t(i);
      } else {
        double a = real_at(in, row[i]), b = real_at(in, row[size_t(best)]);
        if (std::isnan(a) || (!std::isnan(b) && (max ? a > b : a < b))) best = int64_t(i);
      }
    }
    int64_t v = std::max<int64_t>(best, 0);
    std::memcpy(dst, &v, 8);
    return;
  }
  if (is_integer(out)) {
    bool max = op == OpId::reduce_max;
    uint64_t acc = op == OpId::product ? 1 : 0;
    for (size_t i = 0; i < n; ++i) {
      uint64_t v = int_at(in, row[i]);
      if (op == OpId::sum) acc += v;
      else if (op == OpId::product) acc *= v;
      else if (i == 0) acc = v;
      else {
        bool take = is_signed(in) ? (max ? int64_t(v) > int64_t(acc) : int64_t(v) < int64_t(acc))
                                  : (max ? v > acc : v < acc);
        if (take) acc = v;
      }
    }
    std::memcpy(dst, &acc, dtype_size(out));
    return;
  }
  double acc = op == OpId::product ? 1.0 : 0.0;
  if (op == OpId::reduce_max) acc = -INFINITY;
  if (op == OpId::reduce_min) acc = INFINITY;
  for (auto* p : row) {
    double v = real_at(in, p);
    if (op == OpId::sum) acc += v;
    else if (op == OpId::product) acc *= v;
    else if (std::isnan(v) || std::isnan(acc)) acc = std::numeric_limits<double>::quiet_NaN();
    else if (op == OpId::reduce_max ? v > acc : v < acc) acc = v;
  }
  put_real(out, acc, dst);
}

struct Case {
  OpId op;
  DType type;
  Layout layout;
  std::string name() const {
    return std::string(op_info(op).name) + " " + std::string(dtype_name(type)) + " " + layout.name;
  }
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (OpId op : kOps)
    for (DType t : kTypes)
      for (const Layout& l : layouts()) {
        bool arg = op == OpId::argmax || op == OpId::argmin;
        bool extreme = arg || op == OpId::reduce_max || op == OpId::reduce_min;
        if (arg && l.axes.size() > 1) continue;                   // one axis
        if (extreme && shape_size(l.shape) == 0) continue;        // Nx has no identity to give
        cases.push_back({op, t, l});
      }
  return cases;
}

// NaNs match NaNs; for max/min, -0.0 matches 0.0 (which zero a row holding both gives is not
// kept: see README, known limits).
bool same_bits(DType t, const std::byte* a, const std::byte* b, bool zero_sign_free) {
  if (is_float(t) && std::isnan(real_at(t, a)) && std::isnan(real_at(t, b))) return true;
  if (zero_sign_free && is_float(t) && real_at(t, a) == 0.0 && real_at(t, b) == 0.0) return true;
  return std::memcmp(a, b, dtype_size(t)) == 0;
}

class Reduce : public DeviceTest {
 protected:
  void expect_host_reference_bits(size_t cases, uint32_t seed);
};

TEST_F(Reduce, EveryOpTypeAndLayoutMatchesTheHostReferenceBitForBit) { expect_host_reference_bits(160, 0); }

// The GPUs' plans on any device: more invocations per row, columns shared by invocations a
// workgroup apart (lanes_apart) where the CPU drivers' plan cuts them into chunks.
TEST_F(Reduce, GpuPlansMatchTheHostReferenceBitForBit) {
  ScopedTuning gpu("gpu_paths", "1");
  expect_host_reference_bits(80, 1);
}

void Reduce::expect_host_reference_bits(size_t cases, uint32_t seed) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + seed);
  size_t ran = 0;
  std::string failures;
  for (const Case& c : sample_cases(all_cases(), cases)) {
    DType out = out_type(c.op, c.type);
    const Layout& l = c.layout;
    // The logical input (what the op sees) and the stored tensor it is a view of.
    Shape stored = l.shape;
    if (l.view == 1) std::reverse(stored.begin(), stored.end());
    if (l.view == 2) stored[0] = 1;
    size_t n_stored = size_t(shape_size(stored));
    auto bytes = random_input(c.op, c.type, n_stored, rng);
    Tensor base = from_host(d, c.type, stored, bytes.data(), bytes.size());
    Tensor input = l.view == 1   ? transpose_view(base, {1, 0})
                   : l.view == 2 ? broadcast_view(base, l.shape)
                                 : base;
    // Host view of the logical input: element pointers in row-major order of l.shape.
    size_t n = size_t(shape_size(l.shape));
    std::vector<const std::byte*> elems(n);
    auto strides = input.strides;
    for (size_t i = 0; i < n; ++i) {
      size_t rest = i, offset = 0;
      for (size_t a = l.shape.size(); a-- > 0;) {
        offset += (rest % size_t(l.shape[a])) * size_t(strides[a]);
        rest /= size_t(l.shape[a]);
      }
      elems[i] = bytes.data() + offset * dtype_size(c.type);
    }
    std::vector<bool> reduced(l.shape.size(), l.all);
    for (int64_t a : l.axes) reduced[size_t(a)] = true;
    Shape out_shape;
    for (size_t a = 0; a < l.shape.size(); ++a)
      if (!reduced[a]) out_shape.push_back(l.shape[a]);
    // Rows: group logical elements by their kept coordinates, in order.
    size_t rows = size_t(shape_size(out_shape));
    std::vector<std::vector<const std::byte*>> by_row(rows);
    for (size_t i = 0; i < n; ++i) {
      size_t rest = i, row = 0, scale = 1;
      for (size_t a = l.shape.size(); a-- > 0;) {
        size_t coord = rest % size_t(l.shape[a]);
        rest /= size_t(l.shape[a]);
        if (!reduced[a]) row += coord * scale, scale *= size_t(l.shape[a]);
      }
      by_row[row].push_back(elems[i]);
    }
    std::vector<std::byte> expected(rows * dtype_size(out));
    for (size_t r = 0; r < rows; ++r) reference_row(c.op, c.type, out, by_row[r], expected.data() + r * dtype_size(out));

    Attrs attrs;
    if (c.op == OpId::argmax || c.op == OpId::argmin) {
      ArgReduceAttrs a;
      a.axis = l.all ? -1 : l.axes[0];
      attrs = Attrs::of(a);
    } else {
      ReduceAttrs a;
      a.all_axes = l.all;
      a.axes = l.axes;
      attrs = Attrs::of(a);
    }
    Support s = check_op(d, c.op, OutSpec{out, out_shape}, std::vector<TensorSpec>{spec_of(input)}, attrs);
    if (!s) {
      failures += c.name() + ": not native: " + s.reason + "\n";
      continue;
    }
    ++ran;
    std::vector<std::byte> got, again;
    try {
      Tensor result = run_op(d, c.op, OutSpec{out, out_shape}, {input}, attrs);
      got = to_host(d, result);
      again = to_host(d, run_op(d, c.op, OutSpec{out, out_shape}, {input}, attrs));
    } catch (const std::exception& e) {
      failures += c.name() + ": threw " + e.what() + "\n";
      continue;
    }
    size_t bad = 0;
    std::ostringstream why;
    for (size_t r = 0; r < rows; ++r) {
      const std::byte* g = got.data() + r * dtype_size(out);
      bool zero_sign_free = c.op == OpId::reduce_max || c.op == OpId::reduce_min;
      if (!same_bits(out, g, expected.data() + r * dtype_size(out), zero_sign_free)) {
        if (bad++ < 3) {
          uint64_t gb = 0, eb = 0;
          std::memcpy(&gb, g, dtype_size(out));
          std::memcpy(&eb, expected.data() + r * dtype_size(out), dtype_size(out));
          why << " [row " << r << ": got 0x" << std::hex << gb << ", expected 0x" << eb << std::dec << "]";
        }
      }
    }
    if (bad) failures += c.name() + ": " + std::to_string(bad) + " of " + std::to_string(rows) + " rows differ" + why.str() + "\n";
    if (got != again) failures += c.name() + ": a second run gave other bits\n";
  }
  EXPECT_TRUE(failures.empty()) << failures;
  EXPECT_GT(ran, 0u);
}

}  // namespace
