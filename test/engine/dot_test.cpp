// The dot family on fresh random inputs: shapes that take each path (tiled GEMM with tile
// edges straddled, matrix-vector both ways, batches, several contracting axes, no
// contracting axis, K = 0, empty outputs), transposed and broadcast views (read in place) and
// axis groups that do not collapse (copied first), on every type and some mixed-type pairs,
// against a host reference. Integers: bit for bit (full-range values, so products and sums
// wrap). Floats: |got - exact| <= eps_out * |exact| + (K + 2) * eps_acc * sum_k |a| |b|
// (eps_acc: f32 for f16/bf16/f32 outputs, f64 for f64; bf16 stores truncate: eps_out 2^-7).
#include <bit>
#include <cmath>
#include <chrono>
#include <complex>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "device/device_impl.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/dot_coopmat2.hpp"
#include "ops/dot/dot_cpu.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_plan.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Element offsets (row-major over `shape`) of every index of `axes`, in row-major order of them.
std::vector<int64_t> offsets(const Shape& shape, const std::vector<int64_t>& axes) {
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

std::vector<int64_t> free_of(size_t rank, const std::vector<int64_t>& c, const std::vector<int64_t>& b) {
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

DotAttrs axes(std::vector<int64_t> lc, std::vector<int64_t> lb, std::vector<int64_t> rc, std::vector<int64_t> rb) {
  return DotAttrs{std::move(lc), std::move(lb), std::move(rc), std::move(rb)};
}

std::vector<DotCase> dot_cases() {
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

const DType kAllTypes[] = {DType::U8,  DType::S8,  DType::U16,  DType::S16, DType::U32, DType::S32, DType::U64,
                           DType::S64, DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};

struct TypeCase {
  DType left, right, out;
};

std::string describe(const DotCase& c, const TypeCase& t) {
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
std::pair<Tensor, std::vector<std::byte>> make_operand(Device& dev, DType t, const Shape& shape, View view,
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
void run_case(Device& dev, const DotCase& c, const TypeCase& types, uint32_t seed, double eps_acc_given = 0,
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
        double tol_re = type_epsilon(types.out) * std::abs(acc.real()) + slack * double(K + 2) * eps_acc * mag +
                        eps_product * mag;
        double tol_im = type_epsilon(types.out) * std::abs(acc.imag()) + slack * double(K + 2) * eps_acc * mag +
                        eps_product * mag;
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

// Every layout in f32 and s32 (exact wrap-around).
TEST_F(Dot, EveryLayoutF32AndS32) {
  auto cases = dot_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + uint32_t(i));
    run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + uint32_t(i));
  }
}

// Every type through the GEMM kernels (tiled: a transposed operand; on CPU drivers also the
// row kernel, N a multiple of 4, A read four-wide along k with a remainder); the matrix-vector kernels on four types drawn per run
// (every type with NXV_TEST_EXHAUSTIVE=1): each type is a kernel compile, slow on lavapipe.
TEST_F(Dot, EveryType) {
  std::vector<DotCase> gemm, matvec;
  for (const auto& c : dot_cases()) {
    if (c.name == "transposed_a_33x20x18" || c.name == "padded_rows_a_21x6x36") gemm.push_back(c);
    if (c.name == "matvec_m1_300x70" || c.name == "matvec_n1_70x300") matvec.push_back(c);
  }
  std::vector<DType> all(std::begin(kAllTypes), std::end(kAllTypes));
  std::vector<DType> sampled = sample_cases(all, 4);
  for (DType t : all) {
    if (!supported({t, t, t})) {
      std::printf("dot on %s is not native on this device\n", std::string(dtype_name(t)).c_str());
      continue;
    }
    for (size_t i = 0; i < gemm.size(); ++i) run_case(*device_, gemm[i], {t, t, t}, sample_seed() + 100 + uint32_t(i));
    if (std::find(sampled.begin(), sampled.end(), t) == sampled.end()) continue;
    for (size_t i = 0; i < matvec.size(); ++i)
      run_case(*device_, matvec[i], {t, t, t}, sample_seed() + 110 + uint32_t(i));
  }
}

// Inputs of different types (Nx promotes the output; the engine converts on load).
TEST_F(Dot, MixedTypes) {
  const TypeCase pairs[] = {{DType::U8, DType::S8, DType::S16},   {DType::S32, DType::F32, DType::F32},
                            {DType::F16, DType::F32, DType::F32}, {DType::F32, DType::C64, DType::C64},
                            {DType::BF16, DType::F16, DType::F32}, {DType::U8, DType::U8, DType::U8}};
  std::vector<DotCase> cases;
  for (const auto& c : dot_cases())
    if (c.name == "matmul_tile_edges_65x17x132" || c.name == "matvec_n1_70x300") cases.push_back(c);
  for (const auto& t : pairs) {
    if (!supported(t)) continue;
    for (size_t i = 0; i < cases.size(); ++i) run_case(*device_, cases[i], t, sample_seed() + 200 + uint32_t(i));
  }
}

// Random configurations: 0-1 batch axes, 0-2 contracting axes, 0-2 free axes per operand,
// placed at random positions of each operand, extents 0-70 (mostly small), dense or
// transposed, f32 / s32 / f64 (drawn with NXV_TEST_SEED; more with NXV_TEST_EXHAUSTIVE=1).
TEST_F(Dot, RandomShapes) {
  std::mt19937 rng(sample_seed() + 500);
  auto extent = [&] {
    int r = int(rng() % 100);
    return int64_t(r < 4 ? 0 : r < 80 ? 1 + rng() % 12 : 13 + rng() % 58);
  };
  int count = exhaustive_tests() ? 200 : 24;
  const DType types[] = {DType::F32, DType::S32, DType::F64};
  for (int n = 0; n < count; ++n) {
    size_t nb = rng() % 2, nc = rng() % 3, nfl = rng() % 3, nfr = rng() % 3;
    std::vector<int64_t> batch(nb), contract(nc), free_l(nfl), free_r(nfr);
    for (auto* v : {&batch, &contract, &free_l, &free_r})
      for (auto& x : *v) x = extent();
    // Keep each case small: output elements times K under 300k.
    auto prod = [](const std::vector<int64_t>& v) { int64_t p = 1; for (auto x : v) p *= x; return p; };
    if (prod(batch) * prod(contract) * prod(free_l) * prod(free_r) > 300000) { --n; continue; }
    auto place = [&](const std::vector<int64_t>& free, Shape& shape, std::vector<int64_t>& b_axes,
                     std::vector<int64_t>& c_axes) {
      size_t rank = nb + nc + free.size();
      std::vector<int64_t> pos(rank);
      for (size_t i = 0; i < rank; ++i) pos[i] = int64_t(i);
      std::shuffle(pos.begin(), pos.end(), rng);
      shape.assign(rank, 0);
      size_t p = 0;
      for (size_t i = 0; i < nb; ++i) b_axes.push_back(pos[p]), shape[size_t(pos[p++])] = batch[i];
      for (size_t i = 0; i < nc; ++i) c_axes.push_back(pos[p]), shape[size_t(pos[p++])] = contract[i];
      // Free axes keep their relative order (the output lists them in axis order).
      std::vector<int64_t> rest(pos.begin() + std::ptrdiff_t(p), pos.end());
      std::sort(rest.begin(), rest.end());
      for (size_t i = 0; i < free.size(); ++i) shape[size_t(rest[i])] = free[i];
    };
    DotCase c;
    c.name = "random_" + std::to_string(n);
    place(free_l, c.left, c.attrs.left_batch, c.attrs.left_contract);
    place(free_r, c.right, c.attrs.right_batch, c.attrs.right_contract);
    c.left_view = c.left.size() >= 2 && rng() % 3 == 0 ? kTransposed : kDense;
    c.right_view = c.right.size() >= 2 && rng() % 3 == 0 ? kTransposed : kDense;
    DType t = types[rng() % 3];
    if (!supported({t, t, t})) t = DType::F32;
    run_case(*device_, c, {t, t, t}, sample_seed() + 600 + uint32_t(n));
  }
}


// The tiled kernel with the tiles a GPU gets (NXV_DOT_GPU_PATHS: what a GPU would run, on
// any device): tile edges, transposed operands (the A tile read along m, the B tile along k),
// batches, split-K.
TEST_F(Dot, GpuTiles) {
  ScopedEnv gpu("NXV_DOT_GPU_PATHS", "1");
  std::vector<DotCase> cases;
  for (const auto& c : dot_cases())
    if (c.name == "matmul_130x260x72" || c.name == "transposed_both_24x40x31" || c.name == "batched_3x5x7x9")
      cases.push_back(c);
  // Every layout in f32 with the largest tile; one case each for the other tiles and s32.
  for (const char* tile : {"128,128,16,8,8", "64,64,16,4,4", "32,64,16,4,4", "32,32,16,2,2"}) {
    ScopedEnv forced("NXV_DOT_TILE", tile);
    SCOPED_TRACE(std::string("tile ") + tile);
    bool first = tile[1] == '2';
    for (size_t i = 0; i < (first ? cases.size() : 1); ++i)
      run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 300 + uint32_t(i));
    if (!first) run_case(*device_, cases[2], {DType::S32, DType::S32, DType::S32}, sample_seed() + 310);
  }
  // Split-K (forced: these are short), its sums added by a second pass.
  ScopedEnv splits("NXV_DOT_SPLITS", "3");
  for (size_t i = 0; i < cases.size(); ++i)
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 320 + uint32_t(i));
  run_case(*device_, cases[2], {DType::S32, DType::S32, DType::S32}, sample_seed() + 330);
  run_case(*device_, cases[0], {DType::F16, DType::F16, DType::F16}, sample_seed() + 340);
}

// The CPU drivers' register-block GEMM (gemm_cpu.comp: what the row kernel does not take; on
// GPUs these cases take the GPU kernels): odd sizes around its tiles (1, 3, 17, 33, 511, 513),
// K straddling the subgroup width, batches, transposed, padded and broadcast operands, every
// type; forced tiles (TN > 1, TM not a power of two, small and large workgroups); without
// subgroup operations (its other A loads); and with NXV_DOT_NO_CPU_GEMM=1, the tiled kernel.
TEST_F(Dot, CpuGemm) {
  DotAttrs mm = axes({1}, {}, {0}, {});
  DotAttrs bmm = axes({2}, {0}, {1}, {0});
  const DotCase small[] = {
      {"cpu_3x17x33", {3, 17}, {17, 33}, mm},
      {"cpu_17x1x3", {17, 1}, {1, 3}, mm},
      {"cpu_transposed_a_33x3x17", {33, 3}, {3, 17}, mm, kTransposed},
      {"cpu_transposed_b_17x33x3", {17, 33}, {33, 3}, mm, kDense, kTransposed},
      {"cpu_batched_transposed_3x17x33x3", {3, 17, 33}, {3, 33, 3}, bmm, kTransposed, kTransposed},
      {"cpu_padded_a_broadcast_b_17x3x33", {17, 3}, {3, 33}, mm, kPaddedRows, kBroadcast0},
      {"cpu_transposed_b_20x17x12", {20, 17}, {17, 12}, mm, kDense, kTransposed},
  };
  const DotCase large[] = {
      {"cpu_511x33x513", {511, 33}, {33, 513}, mm},
      {"cpu_transposed_a_513x511x17", {513, 511}, {511, 17}, mm, kTransposed},
      {"cpu_transposed_b_33x513x511", {33, 513}, {513, 511}, mm, kDense, kTransposed},
      {"cpu_batched_2x33x65x513", {2, 33, 65}, {2, 65, 513}, bmm},
  };
  const DeviceCore& core = *device_->impl().core;
  if (device_->info().type == "cpu")
    for (const auto& c : large)
      EXPECT_TRUE(cpu_gemm_tile(core, gemm_shape(c.left, c.right, c.attrs), DType::F32).has_value()) << c.name;
  for (DType t : kAllTypes) {
    if (!supported({t, t, t})) continue;
    for (size_t i = 0; i < std::size(small); ++i) run_case(*device_, small[i], {t, t, t}, sample_seed() + 800 + uint32_t(i));
  }
  for (DType t : {DType::F32, DType::S32, DType::F64}) {
    if (!supported({t, t, t})) continue;
    for (size_t i = 0; i < std::size(large); ++i) run_case(*device_, large[i], {t, t, t}, sample_seed() + 810 + uint32_t(i));
  }
  for (const char* tile : {"5,3,8", "1,2,16", "32,1,256"}) {
    ScopedEnv forced("NXV_DOT_CPU_TILE", tile);
    SCOPED_TRACE(std::string("tile ") + tile);
    for (size_t i = 0; i < std::size(small); ++i)
      run_case(*device_, small[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 820 + uint32_t(i));
    run_case(*device_, large[3], {DType::F32, DType::F32, DType::F32}, sample_seed() + 830);
    run_case(*device_, small[4], {DType::S32, DType::S32, DType::S32}, sample_seed() + 831);
    run_case(*device_, small[0], {DType::F16, DType::F32, DType::F32}, sample_seed() + 832);
  }
  auto no_subgroups = Device::open({.disabled = kCapSubgroupOps});
  for (DType t : {DType::F32, DType::S64, DType::F64}) {
    if (!supported({t, t, t})) continue;
    for (size_t i = 0; i < std::size(small); ++i)
      run_case(*no_subgroups, small[i], {t, t, t}, sample_seed() + 850 + uint32_t(i));
  }
  run_case(*no_subgroups, large[0], {DType::F32, DType::F32, DType::F32}, sample_seed() + 860);
  ScopedEnv off("NXV_DOT_NO_CPU_GEMM", "1");
  EXPECT_FALSE(cpu_gemm_tile(core, {1, 64, 64, 64}, DType::F32).has_value());
  for (const auto& c : dot_cases())
    if (c.name == "matmul_tile_edges_65x17x132" || c.name == "padded_rows_a_21x6x36" ||
        c.name == "transposed_a_33x20x18")
      for (DType t : {DType::F32, DType::S32, DType::F16})
        if (supported({t, t, t})) run_case(*device_, c, {t, t, t}, sample_seed() + 840);
}

// The tile core's variants as a GPU runs them: operands loaded in vectors of four along
// their unit axis (A along k or along m, B along n or along k) where extents, strides and
// offsets are multiples of four, scalars elsewhere (odd sizes, padded rows); one or two
// shared-memory stages; subgroups as blocks of 4, 8 or 16 invocation columns; tile edges
// straddled in m, n and k; batches and broadcasts; split-K aligned to the vectors; f64
// (four-wide shared reads of doubles) and s32.
TEST_F(Dot, GpuTileVariants) {
  ScopedEnv gpu("NXV_DOT_GPU_PATHS", "1");
  ScopedEnv vectors("NXV_DOT_GVEC4", "1");
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase cases[] = {
      {"vec4_132x68x200", {132, 68}, {68, 200}, mm},
      {"vec4_transposed_a_132x68x200", {132, 68}, {68, 200}, mm, kTransposed},
      {"vec4_transposed_b_132x68x200", {132, 68}, {68, 200}, mm, kDense, kTransposed},
      {"vec4_batched_3x36x20x44", {3, 36, 20}, {3, 20, 44}, axes({2}, {0}, {1}, {0})},
      {"vec4_broadcast_a_4x12x16x8", {4, 12, 16}, {4, 16, 8}, axes({2}, {0}, {1}, {0}), kBroadcast0},
      {"scalar_odd_129x67x131", {129, 67}, {67, 131}, mm},
      {"scalar_padded_rows_a_70x36x68", {70, 36}, {36, 68}, mm, kPaddedRows},
  };
  auto all = [&](uint32_t seed) {
    for (size_t i = 0; i < std::size(cases); ++i) {
      SCOPED_TRACE(cases[i].name);
      run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, seed + uint32_t(i));
    }
  };
  {
    ScopedEnv tile("NXV_DOT_TILE", "128,128,16,8,8");
    ScopedEnv stages("NXV_DOT_DBUF", "1");
    all(sample_seed() + 700);
    ScopedEnv warp("NXV_DOT_WARP_X", "8");
    all(sample_seed() + 710);
    ScopedEnv splits("NXV_DOT_SPLITS", "3");
    all(sample_seed() + 720);
  }
  {
    ScopedEnv tile("NXV_DOT_TILE", "64,64,16,4,4");
    ScopedEnv warp("NXV_DOT_WARP_X", "4");
    all(sample_seed() + 730);
  }
  {
    // One tile per workgroup: batches and tile edges, and split-K (k of 600 gives 2 splits).
    ScopedEnv tile("NXV_DOT_TILE", "64,64,16,4,4");
    ScopedEnv one("NXV_DOT_ONE_TILE", "1");
    all(sample_seed() + 735);
    run_case(*device_, {"one_tile_split_k_20x600x36", {20, 600}, {600, 36}, mm}, {DType::F32, DType::F32, DType::F32},
             sample_seed() + 736);
  }
  {
    ScopedEnv tile("NXV_DOT_TILE", "32,64,8,4,4");
    ScopedEnv warp("NXV_DOT_WARP_X", "16");
    ScopedEnv scalar("NXV_DOT_NO_GVEC4", "1");
    run_case(*device_, cases[0], {DType::F32, DType::F32, DType::F32}, sample_seed() + 740);
  }
  ScopedEnv tile("NXV_DOT_TILE", "64,64,16,4,4");
  ScopedEnv stages("NXV_DOT_DBUF", "1");
  ScopedEnv wide("NXV_DOT_VEC4_64", "1");
  for (size_t i : {0, 2, 5}) {
    SCOPED_TRACE(cases[i].name);
    if (supported({DType::F64, DType::F64, DType::F64}))
      run_case(*device_, cases[i], {DType::F64, DType::F64, DType::F64}, sample_seed() + 750 + uint32_t(i));
    run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + 760 + uint32_t(i));
  }
}

// The matrix-vector kernel as a GPU runs it: four outputs per invocation in vector loads,
// k split across the workgroup's invocations and across workgroups (split-K, a second pass
// adding the splits), k adjacent (a row per group of invocations), batches.
TEST_F(Dot, GpuMatvecPaths) {
  ScopedEnv gpu("NXV_DOT_GPU_PATHS", "1");
  const DotCase cases[] = {
      {"vector_times_matrix_split_k_3000x64", {3000}, {3000, 64}, axes({0}, {}, {0}, {})},
      {"matrix_times_vector_split_k_6x2000", {6, 2000}, {2000}, axes({1}, {}, {0}, {})},
      {"batched_vector_times_matrix_3x1500x8", {3, 1500}, {3, 1500, 8}, axes({1}, {0}, {1}, {0})},
      {"vector_times_matrix_odd_300x70", {300}, {300, 70}, axes({0}, {}, {0}, {})},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 400 + uint32_t(i));
    if (i < 2) run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + 410 + uint32_t(i));
  }
  run_case(*device_, cases[0], {DType::BF16, DType::BF16, DType::BF16}, sample_seed() + 420);
  ScopedEnv splits("NXV_DOT_SPLITS", "5");
  run_case(*device_, cases[3], {DType::F32, DType::F32, DType::F32}, sample_seed() + 430);
}

// The cooperative-matrix tier (f16 x f16, bf16 x bf16; f32 accumulation) on a device that
// reports the shapes; skipped, saying why, elsewhere (lavapipe has none). Tile edges in every
// direction (primes, sizes straddling 64 and 128), K = 0 and 1, batches, transposed and
// padded operands (the 8-wide and the element-wise reads), both tiles, split-K. Tolerance:
// |got - exact| <= eps_out * |exact| + (K + 2) * 2^-22 * sum_k |a| |b|: products of 16-bit
// floats are exact in f32, and the tensor cores' f32 additions are allowed twice the error of
// rounded ones (some truncate); then one rounding (bf16: truncation) to the output type.
TEST_F(Dot, CooperativeMatrixTier) {
  const DeviceCore& core = *device_->impl().core;
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase cases[] = {
      {"matmul_1x1x1", {1, 1}, {1, 1}, mm},  // the matrix-vector path: must agree too
      {"matmul_2x1x2", {2, 1}, {1, 2}, mm},
      {"matmul_17x129x33", {17, 129}, {129, 33}, mm},
      {"matmul_255x257x129", {255, 257}, {257, 129}, mm},
      {"matmul_128x64x128", {128, 64}, {64, 128}, mm},
      {"matmul_129x72x127", {129, 72}, {72, 127}, mm},
      {"matmul_aligned_split_k_256x1024x192", {256, 1024}, {1024, 192}, mm},
      {"batched_3x5x7x9", {3, 5, 7}, {3, 7, 9}, axes({2}, {0}, {1}, {0})},
      {"batched_aligned_2x64x96x40", {2, 64, 96}, {2, 96, 40}, axes({2}, {0}, {1}, {0})},
      {"k0_3x0x4", {3, 0}, {0, 4}, mm},
      {"transposed_a_33x20x18", {33, 20}, {20, 18}, mm, kTransposed},
      {"transposed_b_40x31x24", {40, 31}, {31, 24}, mm, kDense, kTransposed},
      {"transposed_both_aligned_64x128x72", {64, 128}, {128, 72}, mm, kTransposed, kTransposed},
      {"padded_rows_a_21x6x36", {21, 6}, {6, 36}, mm, kPaddedRows},
      {"broadcast_a_9x12x10", {9, 12}, {12, 10}, mm, kBroadcast0},
  };
  const TypeCase types[] = {{DType::F16, DType::F16, DType::F16}, {DType::BF16, DType::BF16, DType::BF16},
                            {DType::F16, DType::F16, DType::F32}, {DType::BF16, DType::BF16, DType::F32}};
  auto takes_tier = [&](const TypeCase& t, const GemmShape& g) {
    GemmOperand a{{}, t.left, {0, 0, 1}}, b{{}, t.right, {0, 0, 1}};
    return g.m > 1 && g.n > 1 && coopmat_gemm_tile(core, g, a, b, t.out).has_value();
  };
  for (const auto& s : device_->info().cooperative_matrix_shapes)
    std::printf("[coopmat] shape %ux%ux%u %s x %s + %s -> %s (%s)\n", s.m, s.n, s.k, s.a_type.c_str(), s.b_type.c_str(),
                s.c_type.c_str(), s.result_type.c_str(), s.scope.c_str());
  std::printf("[coopmat] coopmat2: %d, bf16 matrices: %d, subgroup %u\n", int(device_->has(kCapCooperativeMatrix2)),
              int(device_->info().features.bfloat16_cooperative_matrix), device_->info().subgroup_size);
  // The workgroup-scope tier, where asked for, would take most of these first (its own test is below).
  ScopedEnv no_coopmat2("NXV_DOT_NO_COOPMAT2", "1");
  int ran = 0;
  for (const auto& t : types) {
    if (!takes_tier(t, {1, 64, 64, 64})) {
      std::printf("[coopmat] %s x %s -> %s: no cooperative-matrix shape on this device\n",
                  std::string(dtype_name(t.left)).c_str(), std::string(dtype_name(t.right)).c_str(),
                  std::string(dtype_name(t.out)).c_str());
      continue;
    }
    ++ran;
    for (size_t i = 0; i < std::size(cases); ++i) {
      const DotCase& c = cases[i];
      GemmShape g = gemm_shape(c.left, c.right, c.attrs);
      if (g.m > 1 && g.n > 1) EXPECT_TRUE(takes_tier(t, g)) << c.name;
      run_case(*device_, c, t, sample_seed() + 700 + uint32_t(i), 0x1p-22);
    }
    // The large tile on shapes too small to get it by themselves, and forced split-K.
    {
      ScopedEnv tile("NXV_DOT_COOPMAT_TILE", "128,128,32,64,32");
      run_case(*device_, cases[3], t, sample_seed() + 720, 0x1p-22);
      run_case(*device_, cases[12], t, sample_seed() + 721, 0x1p-22);
    }
    ScopedEnv splits("NXV_DOT_SPLITS", "3");
    run_case(*device_, cases[3], t, sample_seed() + 730, 0x1p-22);
    run_case(*device_, cases[8], t, sample_seed() + 731, 0x1p-22);
  }
  if (!ran) GTEST_SKIP() << "the device reports no f16 or bf16 cooperative-matrix shape (or the tier is off)";
}

// NX_VULKAN_DOT_F32=bf16x3: f32 GEMMs through bf16 parts (dot_bf16x3.hpp) within 2^-15 of
// sum |a| |b| (plus f32 accumulation) of the exact product, on every layout; forced onto any
// device's GEMM tiers (NXV_DOT_BF16X3_ANY=1) where it has no bf16 tensor cores. Dropping the lo
// parts would miss that bound (about 2^-9 per product, and K here stays under 2^12). An
// infinity multiplies as one, NaN stays NaN, matrix-vector shapes keep the f32 kernels, and
// without the switch or the tensor cores nothing changes.
TEST_F(Dot, Bf16x3ReducedPrecisionMode) {
  ScopedEnv no_blas("NX_VULKAN_HOST_BLAS", "0");  // CPU drivers' BLAS tier would come first
  auto launches = [&](const std::function<void()>& f) {
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    f();
    device_->synchronize();
    return device_->stream_stats().commands - before;
  };
  const DotCase square = dot_cases()[4];  // 130x260x72
  std::optional<ScopedEnv> one_split;  // launches counted without split-K's sums
  one_split.emplace("NXV_DOT_SPLITS", "1");
  auto run_square = [&] { run_case(*device_, square, {DType::F32, DType::F32, DType::F32}, sample_seed() + 950); };
  uint64_t plain = launches(run_square);
  bool tensor_cores = false;
  {
    ScopedEnv mode("NX_VULKAN_DOT_F32", "bf16x3");
    GemmOperand parts{{}, DType::BF16, {0, 0, 1}};
    tensor_cores = coopmat_gemm_tile(*device_->impl().core, {1, 130, 72, 780}, parts, parts, DType::F32).has_value();
    // Without tensor cores (or on a CPU driver) the switch alone changes nothing.
    if (!tensor_cores) EXPECT_EQ(launches(run_square), plain);
  }
  ScopedEnv mode("NX_VULKAN_DOT_F32", "bf16x3");
  ScopedEnv any("NXV_DOT_BF16X3_ANY", "1");
  EXPECT_EQ(launches([&] { run_case(*device_, square, {DType::F32, DType::F32, DType::F32}, sample_seed() + 951, 0, 0x1p-15); }),
            plain + 2)
      << "two splits, then the GEMM";
  one_split.reset();
  auto cases = dot_cases();
  for (size_t i = 0; i < cases.size(); ++i)
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 960 + uint32_t(i), 0, 0x1p-15);
  ScopedEnv splits("NXV_DOT_SPLITS", "3");
  run_case(*device_, square, {DType::F32, DType::F32, DType::F32}, sample_seed() + 990, 0, 0x1p-15);

  // Specials: rows [inf, 1], [nan, 2], [1 + 2^-10, 0] times [[1, 2], [3, 4]].
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto a = upload(*device_, DType::F32, {3, 2}, std::vector<float>{inf, 1, nan, 2, 1.0f + 0x1p-10f, 0});
  auto b = upload(*device_, DType::F32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  auto c = download<float>(*device_, run_op(*device_, "dot", {DType::F32, {3, 2}}, {a, b}, Attrs::of(axes({1}, {}, {0}, {}))));
  EXPECT_EQ(c[0], inf);
  EXPECT_EQ(c[1], inf);
  EXPECT_TRUE(std::isnan(c[2]) && std::isnan(c[3]));
  EXPECT_EQ(c[4], 1.0f + 0x1p-10f);  // the lo part carries the 2^-10
  EXPECT_EQ(c[5], 2.0f + 0x1p-9f);
}

// The tier stays off where it must: CPU drivers, the capability mask, NXV_DOT_NO_COOPMAT=1,
// and inputs of other types.
TEST_F(Dot, CooperativeMatrixTierSwitches) {
  GemmShape g{1, 256, 256, 256};
  GemmOperand a{{}, DType::F16, {0, 0, 1}}, b{{}, DType::F16, {0, 0, 1}};
  const DeviceCore& core = *device_->impl().core;
  if (device_->info().type == "cpu") EXPECT_FALSE(coopmat_gemm_tile(core, g, a, b, DType::F16).has_value());
  {
    ScopedEnv off("NXV_DOT_NO_COOPMAT", "1");
    EXPECT_FALSE(coopmat_gemm_tile(core, g, a, b, DType::F16).has_value());
  }
  GemmOperand f32a{{}, DType::F32, {0, 0, 1}}, f32b{{}, DType::F32, {0, 0, 1}};
  EXPECT_FALSE(coopmat_gemm_tile(core, g, f32a, f32b, DType::F32).has_value());
  EXPECT_FALSE(coopmat_gemm_tile(core, g, a, f32b, DType::F32).has_value());
  auto masked = Device::open({.disabled = kCapCooperativeMatrix});
  EXPECT_FALSE(coopmat_gemm_tile(*masked->impl().core, g, a, b, DType::F16).has_value());
  auto no_bf16 = Device::open({.disabled = kCapBFloat16});
  GemmOperand bfa{{}, DType::BF16, {0, 0, 1}}, bfb{{}, DType::BF16, {0, 0, 1}};
  EXPECT_FALSE(coopmat_gemm_tile(*no_bf16->impl().core, g, bfa, bfb, DType::BF16).has_value());
}

// The workgroup-scope tier (VK_NV_cooperative_matrix2) where the device has it: tile edges
// straddled in m, n and k, batches, each operand read along either axis (aligned for 16-byte
// reads or not), split-K, and both output types; same tolerance as the KHR tier.
TEST_F(Dot, CooperativeMatrix2Tier) {
  const DeviceCore& core = *device_->impl().core;
  ScopedEnv opt_in("NXV_DOT_COOPMAT2", "1");
  const auto& c2 = device_->info().cooperative_matrix2;
  std::printf("[coopmat2] enabled %d: workgroup scope %d, flexible dimensions %d, tensor addressing %d; max workgroup "
              "%u, max dimension %u, reserved shared %u; maxComputeSharedMemorySize %u\n",
              int(device_->has(kCapCooperativeMatrix2)), int(c2.workgroup_scope), int(c2.flexible_dimensions),
              int(c2.tensor_addressing), c2.max_workgroup_size, c2.max_dimension, c2.reserved_shared_memory,
              device_->info().max_shared_memory);
  std::fflush(stdout);
  for (const auto& s : c2.flexible_shapes)
    std::printf("[coopmat2] flexible %ux%ux%u %s x %s + %s -> %s (%s, %u invocations)\n", s.m, s.n, s.k,
                s.a_type.c_str(), s.b_type.c_str(), s.c_type.c_str(), s.result_type.c_str(), s.scope.c_str(),
                s.workgroup_invocations);
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase cases[] = {
      {"matmul_2x1x2", {2, 1}, {1, 2}, mm},
      {"matmul_17x129x33", {17, 129}, {129, 33}, mm},
      {"matmul_255x257x129", {255, 257}, {257, 129}, mm},
      {"matmul_aligned_256x512x512", {256, 512}, {512, 512}, mm},
      {"matmul_300x200x520", {300, 200}, {200, 520}, mm},
      {"batched_3x130x70x90", {3, 130, 70}, {3, 70, 90}, axes({2}, {0}, {1}, {0})},
      {"batched_aligned_2x128x96x256", {2, 128, 96}, {2, 96, 256}, axes({2}, {0}, {1}, {0})},
      {"k0_3x0x4", {3, 0}, {0, 4}, mm},
      {"transposed_a_133x72x40", {133, 72}, {72, 40}, mm, kTransposed},
      {"transposed_b_140x31x264", {140, 31}, {31, 264}, mm, kDense, kTransposed},
      {"transposed_both_aligned_128x136x256", {128, 136}, {136, 256}, mm, kTransposed, kTransposed},
      {"padded_rows_both_129x66x131", {129, 66}, {66, 131}, mm, kPaddedRows, kPaddedRows},
      {"broadcast_a_9x12x10", {9, 12}, {12, 10}, mm, kBroadcast0},  // a zero stride: the KHR tier
  };
  // Every case for two type combinations (each layout is a pipeline of its own, and these take
  // the driver seconds to build); a few for the other two.
  const TypeCase types[] = {{DType::F16, DType::F16, DType::F32}, {DType::BF16, DType::BF16, DType::BF16},
                            {DType::F16, DType::F16, DType::F16}, {DType::BF16, DType::BF16, DType::F32}};
  auto timed = [&](const DotCase& c, const TypeCase& t, uint32_t seed) {
    auto t0 = std::chrono::steady_clock::now();
    run_case(*device_, c, t, seed, 0x1p-22);
    std::printf("[coopmat2] %s %s -> %s: %.0f ms\n", c.name.c_str(), std::string(dtype_name(t.left)).c_str(),
                std::string(dtype_name(t.out)).c_str(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
  };
  int ran = 0;
  for (size_t ti = 0; ti < std::size(types); ++ti) {
    const TypeCase& t = types[ti];
    GemmOperand a{{}, t.left, {0, 64, 1}}, b{{}, t.right, {0, 64, 1}};
    if (!coopmat2_gemm_tile(core, {1, 64, 64, 64}, a, b, t.out)) {
      std::printf("[coopmat2] %s -> %s: not on this device\n", std::string(dtype_name(t.left)).c_str(),
                  std::string(dtype_name(t.out)).c_str());
      continue;
    }
    ++ran;
    for (size_t i = 0; i < std::size(cases); ++i)
      if (ti < 2 || i == 2 || i == 10 || i == 11) timed(cases[i], t, sample_seed() + 800 + uint32_t(i));
    if (ti >= 2) continue;
    // The large tile on small shapes, and forced split-K (a last chunk shorter than the k step).
    {
      ScopedEnv tile("NXV_DOT_COOPMAT2_TILE", "128,256,64,256");
      timed(cases[2], t, sample_seed() + 820);
      timed(cases[10], t, sample_seed() + 821);
    }
    ScopedEnv splits("NXV_DOT_SPLITS", "3");
    timed(cases[4], t, sample_seed() + 830);
    timed(cases[6], t, sample_seed() + 831);
  }
  if (!ran) GTEST_SKIP() << "no workgroup-scope cooperative matrices for f16/bf16 (or the tier is off)";
}

// The workgroup-scope tier is off unless asked for (NXV_DOT_COOPMAT2=1), and stays off on CPU
// drivers, under the capability mask (coopmat2, and coopmat for both tiers),
// NXV_DOT_NO_COOPMAT2=1 or NXV_DOT_NO_COOPMAT=1, for other types, and for an operand with no
// unit-stride axis.
TEST_F(Dot, CooperativeMatrix2TierSwitches) {
  GemmShape g{1, 256, 256, 256};
  GemmOperand a{{}, DType::F16, {0, 256, 1}}, b{{}, DType::F16, {0, 256, 1}};
  const DeviceCore& core = *device_->impl().core;
  {
    ScopedEnv not_asked("NXV_DOT_COOPMAT2", "0");
    EXPECT_FALSE(coopmat2_gemm_tile(core, g, a, b, DType::F16).has_value());
  }
  ScopedEnv opt_in("NXV_DOT_COOPMAT2", "1");
  if (device_->info().type == "cpu") EXPECT_FALSE(coopmat2_gemm_tile(core, g, a, b, DType::F16).has_value());
  for (const char* name : {"NXV_DOT_NO_COOPMAT2", "NXV_DOT_NO_COOPMAT"}) {
    ScopedEnv off(name, "1");
    EXPECT_FALSE(coopmat2_gemm_tile(core, g, a, b, DType::F16).has_value()) << name;
  }
  GemmOperand f32a{{}, DType::F32, {0, 256, 1}}, f32b{{}, DType::F32, {0, 256, 1}};
  EXPECT_FALSE(coopmat2_gemm_tile(core, g, f32a, f32b, DType::F32).has_value());
  GemmOperand strided{{}, DType::F16, {0, 512, 2}};
  EXPECT_FALSE(coopmat2_gemm_tile(core, g, strided, b, DType::F32).has_value());
  for (uint32_t mask : {uint32_t(kCapCooperativeMatrix2), uint32_t(kCapCooperativeMatrix)}) {
    auto masked = Device::open({.disabled = mask});
    EXPECT_FALSE(coopmat2_gemm_tile(*masked->impl().core, g, a, b, DType::F16).has_value()) << mask;
  }
}

// CPU drivers: f32/f64 products go to the system's OpenBLAS (dot_host.hpp) where it loads.
// The other tests run the kernels (test_main turns this tier off unless asked for).
TEST_F(Dot, HostBlasTier) {
  if (device_->impl().core->info().type != "cpu" || !host_blas_available())
    GTEST_SKIP() << "the host BLAS tier needs a CPU driver and libopenblas.so.0";
  ScopedEnv on("NX_VULKAN_HOST_BLAS", "1");
  auto cases = dot_cases();
  bool f64 = device_->has(kCapFloat64);  // masked off in the NX_VULKAN_DISABLE=f64 profile
  for (size_t i = 0; i < cases.size(); ++i)
    for (DType t : {DType::F32, DType::F64})
      if (t == DType::F32 || f64) run_case(*device_, cases[i], {t, t, t}, sample_seed() + 900 + uint32_t(i));
  Device& dev = *device_;
  Attrs mm = Attrs::of(axes({1}, {}, {0}, {}));
  // Between GPU work: negate before it (on the stream, not yet waited for), add after it.
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {1, 0, -1, 2, 0.5f, 3};  // 2x3 . 3x2
  Tensor tx = from_host(dev, DType::F32, {2, 3}, x.data(), x.size() * 4);
  Tensor ty = from_host(dev, DType::F32, {3, 2}, y.data(), y.size() * 4);
  Tensor nx = run_op(dev, "negate", {DType::F32, {2, 3}}, {tx});
  uint64_t commands = dev.stream_stats().commands;
  Tensor d = run_op(dev, "dot", {DType::F32, {2, 2}}, {nx, ty}, mm);
  EXPECT_EQ(dev.stream_stats().commands, commands) << "a dense product records no kernel";
  Tensor dd = run_op(dev, "add", {DType::F32, {2, 2}}, {d, d});
  auto got = download<float>(dev, dd);
  std::vector<float> want = {-2 * (1 - 2 + 1.5f), -2 * (0 + 4 + 9), -2 * (4 - 5 + 3), -2 * (0 + 10 + 18)};
  EXPECT_EQ(got, want);
  // NaN and infinities propagate as in the kernels (0 * inf and 0 * NaN are NaN).
  if (f64) {
    std::vector<double> p = {std::nan(""), 1, INFINITY, 0}, z = {0, 0, 0, 0};
    Tensor tp = from_host(dev, DType::F64, {2, 2}, p.data(), 32), tz = from_host(dev, DType::F64, {2, 2}, z.data(), 32);
    for (double v : download<double>(dev, run_op(dev, "dot", {DType::F64, {2, 2}}, {tp, tz}, mm)))
      EXPECT_TRUE(std::isnan(v));
  }
  // A caller that may not block (a normal BEAM scheduler) is told to retry where it may.
  {
    CompileFreeScope no_blocking;
    EXPECT_FALSE(run_op_if_compiled(dev, *find_op("dot"), {DType::F32, {2, 2}}, {nx, ty}, mm).has_value());
  }
  // By default only products of 2^18 multiply-adds or more: smaller ones record a kernel.
  {
    ScopedEnv by_size("NX_VULKAN_HOST_BLAS", "");
    Tensor big = from_host(dev, DType::F32, {64, 64}, std::vector<float>(4096, 0.5f).data(), 4096 * 4);
    commands = dev.stream_stats().commands;
    Tensor sq = run_op(dev, "dot", {DType::F32, {64, 64}}, {big, big}, mm);
    EXPECT_EQ(dev.stream_stats().commands, commands);
    EXPECT_EQ(download<float>(dev, sq), std::vector<float>(4096, 16.0f));
    run_op(dev, "dot", {DType::F32, {2, 2}}, {nx, ty}, mm);
    EXPECT_GT(dev.stream_stats().commands, commands);
  }
  // Off: the kernels take it.
  ScopedEnv off("NX_VULKAN_HOST_BLAS", "0");
  commands = dev.stream_stats().commands;
  Tensor k = run_op(dev, "dot", {DType::F32, {2, 2}}, {nx, ty}, mm);
  EXPECT_GT(dev.stream_stats().commands, commands);
  EXPECT_EQ(download<float>(dev, run_op(dev, "add", {DType::F32, {2, 2}}, {k, k})), want);
}

TEST_F(Dot, RejectsMismatchedShapesAndTypes) {
  TensorSpec l = contiguous_spec(DType::F32, {3, 4}), r = contiguous_spec(DType::F32, {5, 2});
  TensorSpec specs[] = {l, r};
  Attrs mm = Attrs::of(axes({1}, {}, {0}, {}));
  Support s = check_op(*device_, *find_op("dot"), {DType::F32, {3, 2}}, specs, mm);
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  TensorSpec ok[] = {l, contiguous_spec(DType::F32, {4, 2})};
  EXPECT_TRUE(check_op(*device_, *find_op("dot"), {DType::F32, {3, 2}}, ok, mm));
  EXPECT_FALSE(check_op(*device_, *find_op("dot"), {DType::F32, {2, 3}}, ok, mm));
  EXPECT_FALSE(check_op(*device_, *find_op("dot"), {DType::S32, {3, 2}}, ok, mm));
}

}  // namespace
