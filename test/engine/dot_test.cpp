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
#include "ops/dot/dot_cpu.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_plan.hpp"
#include "dot_test_util.hpp"
#include "op_case_util.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

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


// The tiled kernel with the tiles a GPU gets (gpu_paths: what a GPU would run, on
// any device): tile edges, transposed operands (the A tile read along m, the B tile along k),
// batches, split-K.
TEST_F(Dot, GpuTiles) {
  ScopedTuning gpu("gpu_paths", "1");
  std::vector<DotCase> cases;
  for (const auto& c : dot_cases())
    if (c.name == "matmul_130x260x72" || c.name == "transposed_both_24x40x31" || c.name == "batched_3x5x7x9")
      cases.push_back(c);
  // Every layout in f32 with the largest tile; one case each for the other tiles and s32.
  for (const char* tile : {"128,128,16,8,8", "64,64,16,4,4", "32,64,16,4,4", "32,32,16,2,2"}) {
    ScopedTuning forced("dot.tile", tile);
    SCOPED_TRACE(std::string("tile ") + tile);
    bool first = tile[1] == '2';
    for (size_t i = 0; i < (first ? cases.size() : 1); ++i)
      run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 300 + uint32_t(i));
    if (!first) run_case(*device_, cases[2], {DType::S32, DType::S32, DType::S32}, sample_seed() + 310);
  }
  // The GPUs' own choice for 256-row products with long k (a training step's): 64x64 tiles
  // and split-K, B read along n or along k, tile edges in m, n and k.
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase training[] = {
      {"training_256x520x512", {256, 520}, {520, 512}, mm},
      {"training_transposed_b_256x520x512", {256, 520}, {520, 512}, mm, kDense, kTransposed},
      {"training_edges_200x515x520", {200, 515}, {515, 520}, mm},
  };
  for (size_t i = 0; i < std::size(training); ++i)
    run_case(*device_, training[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 315 + uint32_t(i));
  // Split-K (forced: these are short), its sums added by a second pass.
  ScopedTuning splits("dot.splits", "3");
  for (size_t i = 0; i < cases.size(); ++i)
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 320 + uint32_t(i));
  run_case(*device_, cases[2], {DType::S32, DType::S32, DType::S32}, sample_seed() + 330);
  run_case(*device_, cases[0], {DType::F16, DType::F16, DType::F16}, sample_seed() + 340);
}

// The CPU drivers' register-block GEMM (gemm_cpu.comp: what the row kernel does not take; on
// GPUs these cases take the GPU kernels): odd sizes around its tiles (1, 3, 17, 33, 511, 513),
// K straddling the subgroup width, batches, transposed, padded and broadcast operands, every
// type; forced tiles (TN > 1, TM not a power of two, small and large workgroups); without
// subgroup operations (its other A loads); and with dot.no_cpu_gemm, the tiled kernel.
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
    ScopedTuning forced("dot.cpu_tile", tile);
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
  ScopedTuning off("dot.no_cpu_gemm", "1");
  EXPECT_FALSE(cpu_gemm_tile(core, {1, 64, 64, 64}, DType::F32).has_value());
  for (const auto& c : dot_cases())
    if (c.name == "matmul_tile_edges_65x17x132" || c.name == "padded_rows_a_21x6x36" ||
        c.name == "transposed_a_33x20x18")
      for (DType t : {DType::F32, DType::S32, DType::F16})
        if (supported({t, t, t})) run_case(*device_, c, {t, t, t}, sample_seed() + 840);
}

// Products of a few columns as GPUs run them (gpu_paths): one matrix-vector product per
// column, A read along k or along m, B either way, split or not; dot.no_columns gives them
// to the tiles.
TEST_F(Dot, GpuColumnProducts) {
  ScopedTuning gpu("gpu_paths", "1");
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase columns[] = {
      {"columns_200x300x10", {200, 300}, {300, 10}, mm},
      {"columns_transposed_a_128x256x10", {128, 256}, {256, 10}, mm, kTransposed},
      {"columns_transposed_b_97x130x3", {97, 130}, {130, 3}, mm, kDense, kTransposed},
      {"columns_long_k_64x3000x16", {64, 3000}, {3000, 16}, mm},
  };
  const DeviceCore& core = *device_->impl().core;
  for (size_t i = 0; i < std::size(columns); ++i) {
    SCOPED_TRACE(columns[i].name);
    EXPECT_TRUE(matvec_per_column(core, gemm_shape(columns[i].left, columns[i].right, columns[i].attrs)));
    for (DType t : {DType::F32, DType::S32, DType::F64})
      if (supported({t, t, t})) run_case(*device_, columns[i], {t, t, t}, sample_seed() + 910 + uint32_t(i));
  }
  EXPECT_FALSE(matvec_per_column(core, {2, 200, 10, 300}));  // batched: the tiles
  EXPECT_FALSE(matvec_per_column(core, {1, 200, 17, 300}));
  ScopedTuning off("dot.no_columns", "1");
  EXPECT_FALSE(matvec_per_column(core, {1, 200, 10, 300}));
}

// Products of 2 to 16 rows as one matrix-vector product per row: against the host reference,
// and bit for bit the transposed product's columns (so that a transpose of such a product
// folds into it: permutation_folding), the A^T B of a last layer's weight gradient among them.
TEST_F(Dot, GpuRowProductsAreTheirTransposesColumns) {
  ScopedTuning gpu("gpu_paths", "1");
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase rows[] = {
      {"rows_10x300x200", {10, 300}, {300, 200}, mm},
      {"rows_a_transposed_10x256x128", {10, 256}, {256, 128}, mm, kTransposed},
      {"rows_3x130x97", {3, 130}, {130, 97}, mm, kDense, kTransposed},
  };
  const DeviceCore& core = *device_->impl().core;
  Device& d = *device_;
  for (size_t i = 0; i < std::size(rows); ++i) {
    SCOPED_TRACE(rows[i].name);
    EXPECT_TRUE(matvec_per_row(core, gemm_shape(rows[i].left, rows[i].right, rows[i].attrs)));
    for (DType t : {DType::F32, DType::S32, DType::F64})
      if (supported({t, t, t})) run_case(d, rows[i], {t, t, t}, sample_seed() + 930 + uint32_t(i));
  }
  // x^T dy (x [k, m], dy [k, n], m = 10) and dy^T x transposed: the same bits.
  std::mt19937 rng(sample_seed() + 940);
  const int64_t k = 256, m = 10, n = 200;
  for (DType t : {DType::F32, DType::F64}) {
    if (!supported({t, t, t})) continue;
    Tensor x = random_tensor(d, t, {k, m}, rng), dy = random_tensor(d, t, {k, n}, rng);
    DotAttrs over_k = axes({0}, {}, {0}, {});
    Tensor xt_dy = run_op(d, OpId::dot, {t, {m, n}}, {x, dy}, Attrs::of(over_k));
    Tensor dyt_x = run_op(d, OpId::dot, {t, {n, m}}, {dy, x}, Attrs::of(over_k));
    expect_same_bits(d, contiguous(d, transpose_view(dyt_x, {1, 0})), xt_dy);
  }
  EXPECT_FALSE(matvec_per_row(core, {2, 10, 200, 300}));  // batched: the tiles
  EXPECT_FALSE(matvec_per_row(core, {1, 17, 200, 300}));
}

// Products of a few rows (or columns) take several vectors per workgroup, each load of the
// shared matrix serving them all: bit for bit the same as one vector per workgroup (every
// output sums its k in the same order), on 4 to 17 vectors (a last workgroup part full), four-
// wide and scalar matrix loads (odd rows), k with a tail, split-K, and f64 (4 vectors).
TEST_F(Dot, GpuMatvecVectorsShareTheMatrix) {
  ScopedTuning gpu("gpu_paths", "1");
  Device& d = *device_;
  const DeviceCore& core = *d.impl().core;
  std::mt19937 rng(sample_seed() + 950);
  DotAttrs mm = axes({1}, {}, {0}, {});
  struct Shape3 {
    int64_t m, k, n;
  };
  // m <= 16: a matrix-vector product per row; n <= 16: one per column.
  const Shape3 shapes[] = {{4, 96, 128}, {5, 301, 97}, {8, 1000, 64}, {13, 130, 256}, {16, 784, 1024},
                           {257, 200, 10}, {64, 77, 4}, {300, 512, 16}};
  for (const Shape3& sh : shapes) {
    for (DType t : {DType::F32, DType::F64, DType::S32}) {
      if (!supported({t, t, t})) continue;
      SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.k) + "x" + std::to_string(sh.n) + " " +
                   std::string(dtype_name(t)));
      GemmShape g{1, sh.m, sh.n, sh.k};
      ASSERT_TRUE(matvec_per_row(core, g) || matvec_per_column(core, g));
      const char* most = t == DType::F64 ? "4" : "8";
      {
        ScopedTuning many("dot.matvec_vecs", most);
        DotCase c{"vectors", {sh.m, sh.k}, {sh.k, sh.n}, mm};
        run_case(d, c, {t, t, t}, sample_seed() + 960 + uint32_t(sh.m));
      }
      // The same lanes (their count decides the order of each sum): the same bits.
      Tensor a = random_tensor(d, t, {sh.m, sh.k}, rng), b = random_tensor(d, t, {sh.k, sh.n}, rng);
      OutSpec out{t, {sh.m, sh.n}};
      ScopedTuning lanes("dot.matvec_lx", "8");
      for (const char* splits : {"1", "3"}) {
        ScopedTuning split("dot.splits", splits);
        std::optional<ScopedTuning> many(std::in_place, "dot.matvec_vecs", most);
        Tensor shared = run_op(d, OpId::dot, out, {a, b}, Attrs::of(mm));
        many.reset();
        ScopedTuning one("dot.matvec_vecs", "1");
        expect_same_bits(d, run_op(d, OpId::dot, out, {a, b}, Attrs::of(mm)), shared);
      }
    }
  }
  // The vectors a workgroup takes: up to 8 (4 with 8-byte sums) where the grid stays at its
  // target without a split, none on a batch of matrices. Rows of B^T (k adjacent, 4 rows a
  // workgroup): 256 groups of rows; four-wide columns of B: 16 groups.
  GemmOperand rows_k_adjacent{{0, 0}, DType::F32, {0, 1024, 1}};
  EXPECT_EQ(matvec_lanes(core, DType::F32, 16, 1024, 1024, rows_k_adjacent).vecs, 8u);
  EXPECT_EQ(matvec_lanes(core, DType::F64, 16, 1024, 1024, {{0, 0}, DType::F64, {0, 1024, 1}}).vecs, 4u);
  EXPECT_EQ(matvec_lanes(core, DType::F32, 3, 1024, 1024, rows_k_adjacent).vecs, 1u);
  EXPECT_EQ(matvec_lanes(core, DType::F32, 16, 1024, 1024, {{0, 0}, DType::F32, {1024 * 1024, 1024, 1}}).vecs, 1u);
  EXPECT_EQ(matvec_lanes(core, DType::F32, 16, 1024, 784, {{0, 0}, DType::F32, {0, 1, 1024}}).vecs, 1u);
  // The MLP step's 10-column products at batch 256 (h W3, and h^T dy for W3) keep their grid.
  EXPECT_EQ(matvec_lanes(core, DType::F32, 10, 256, 1024, {{0, 0}, DType::F32, {0, 1024, 1}}).vecs, 1u);
  EXPECT_EQ(matvec_lanes(core, DType::F32, 10, 1024, 256, {{0, 0}, DType::F32, {0, 1, 1024}}).vecs, 1u);
}

// The tile core's variants as a GPU runs them: operands loaded in vectors of four along
// their unit axis (A along k or along m, B along n or along k) where extents, strides and
// offsets are multiples of four, scalars elsewhere (odd sizes, padded rows); one or two
// shared-memory stages; subgroups as blocks of 4, 8 or 16 invocation columns; tile edges
// straddled in m, n and k; batches and broadcasts; split-K aligned to the vectors; f64
// (four-wide shared reads of doubles) and s32.
TEST_F(Dot, GpuTileVariants) {
  ScopedTuning gpu("gpu_paths", "1");
  ScopedTuning vectors("dot.gvec4", "1");
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
    ScopedTuning tile("dot.tile", "128,128,16,8,8");
    all(sample_seed() + 700);
    ScopedTuning warp("dot.warp_x", "8");
    all(sample_seed() + 710);
    ScopedTuning splits("dot.splits", "3");
    all(sample_seed() + 720);
  }
  {
    ScopedTuning tile("dot.tile", "64,64,16,4,4");
    ScopedTuning warp("dot.warp_x", "4");
    all(sample_seed() + 730);
  }
  {
    // The GPUs' default 128x128 tile: 16 x 8 per invocation, k steps of 8, subgroups of 8 x 4.
    ScopedTuning tile("dot.tile", "128,128,8,16,8");
    ScopedTuning warp("dot.warp_x", "8");
    all(sample_seed() + 732);
    // Tiles wholly inside (no edge checks), with and without vector loads, and split-K whose
    // splits then fall on k steps (1024 in 3: 344, 344, 336; in 200: 8 each, 72 empty).
    const DotCase inside[] = {
        {"inside_256x64x128", {256, 64}, {64, 128}, mm},
        {"inside_transposed_a_128x1024x256", {128, 1024}, {1024, 256}, mm, kTransposed},
        {"inside_transposed_b_256x1024x128", {256, 1024}, {1024, 128}, mm, kDense, kTransposed},
        {"inside_batched_2x128x40x128", {2, 128, 40}, {2, 40, 128}, axes({2}, {0}, {1}, {0})},
    };
    auto all_inside = [&](uint32_t seed) {
      for (size_t i = 0; i < std::size(inside); ++i) {
        SCOPED_TRACE(inside[i].name);
        run_case(*device_, inside[i], {DType::F32, DType::F32, DType::F32}, seed + uint32_t(i));
      }
    };
    all_inside(sample_seed() + 790);
    {
      ScopedTuning scalar("dot.gvec4", "0");
      all_inside(sample_seed() + 795);
    }
    for (const char* n : {"3", "200"}) {
      ScopedTuning splits("dot.splits", n);
      all_inside(sample_seed() + 800);
    }
    ScopedTuning splits("dot.splits", "2");
    all(sample_seed() + 733);
  }
  {
    // One tile per workgroup: batches and tile edges, and split-K (k of 600 gives 2 splits).
    ScopedTuning tile("dot.tile", "64,64,16,4,4");
    ScopedTuning one("dot.one_tile", "1");
    all(sample_seed() + 735);
    run_case(*device_, {"one_tile_split_k_20x600x36", {20, 600}, {600, 36}, mm}, {DType::F32, DType::F32, DType::F32},
             sample_seed() + 736);
  }
  {
    ScopedTuning tile("dot.tile", "32,64,8,4,4");
    ScopedTuning warp("dot.warp_x", "16");
    ScopedTuning scalar("dot.gvec4", "0");
    run_case(*device_, cases[0], {DType::F32, DType::F32, DType::F32}, sample_seed() + 740);
  }
  if (supported({DType::F64, DType::F64, DType::F64})) {
    // The GPUs' f64 tile for large products: 64x128, 8 x 8 per invocation.
    ScopedTuning tile("dot.tile", "64,128,16,8,8");
    for (size_t i : {0, 1, 5}) {
      SCOPED_TRACE(cases[i].name);
      run_case(*device_, cases[i], {DType::F64, DType::F64, DType::F64}, sample_seed() + 745 + uint32_t(i));
    }
    run_case(*device_, {"f64_aligned_128x64x256", {128, 64}, {64, 256}, mm}, {DType::F64, DType::F64, DType::F64},
             sample_seed() + 749);
  }
  ScopedTuning tile("dot.tile", "64,64,16,4,4");
  for (size_t i : {0, 2, 5}) {
    SCOPED_TRACE(cases[i].name);
    if (supported({DType::F64, DType::F64, DType::F64}))
      run_case(*device_, cases[i], {DType::F64, DType::F64, DType::F64}, sample_seed() + 750 + uint32_t(i));
    run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + 760 + uint32_t(i));
  }
}

// k split inside the workgroup (slices) as GPUs take it where split-K would add a second pass:
// each slice's sums added up as dot_split_sum.comp adds splits, so that a product has the
// very bits of split-K over the same chunks, with the tile's edges, k tails of every length,
// transposed and batched operands, vector and scalar loads, and integers; within the host
// reference's bounds as well. The GPUs' own choice (a 32x64 tile, four slices) is one launch.
TEST_F(Dot, SlicesAddAsSplitKDoes) {
  ScopedTuning gpu("gpu_paths", "1");
  DotAttrs mm = axes({1}, {}, {0}, {});
  const DotCase cases[] = {
      {"inside_64x1024x128", {64, 1024}, {1024, 128}, mm},
      {"odd_70x601x130", {70, 601}, {601, 130}, mm},
      {"transposed_a_96x520x64", {96, 520}, {520, 64}, mm, kTransposed},
      {"transposed_b_33x700x65", {33, 700}, {700, 65}, mm, kDense, kTransposed},
      {"batched_2x40x530x72", {2, 40, 530}, {2, 530, 72}, axes({2}, {0}, {1}, {0})},
  };
  // The product's bits, and how many commands it alone recorded (its operands uploaded first).
  uint64_t commands = 0;
  auto product = [&](const DotCase& c, DType t, uint32_t seed) {
    std::mt19937 rng(seed);
    auto [left, lbytes] = make_operand(*device_, t, c.left, c.left_view, rng);
    auto [right, rbytes] = make_operand(*device_, t, c.right, c.right_view, rng);
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    Shape out_shape;
    for (int64_t x : c.attrs.left_batch) out_shape.push_back(c.left[size_t(x)]);
    for (int64_t x : free_of(c.left.size(), c.attrs.left_contract, c.attrs.left_batch)) out_shape.push_back(c.left[size_t(x)]);
    for (int64_t x : free_of(c.right.size(), c.attrs.right_contract, c.attrs.right_batch))
      out_shape.push_back(c.right[size_t(x)]);
    Tensor result = run_op(*device_, "dot", {t, out_shape}, {left, right}, Attrs::of(c.attrs));
    device_->synchronize();
    commands = device_->stream_stats().commands - before;
    return to_host(*device_, result);
  };
  ScopedTuning tile("dot.tile", "32,64,16,4,4");
  for (const char* n : {"4", "2"})
    for (size_t i = 0; i < std::size(cases); ++i)
      for (DType t : {DType::F32, DType::S32}) {
        // (Fewer kernels to compile: integers in two layouts, two slices in one.)
        if ((n[0] == '2' && (i != 1 || t != DType::F32)) || (t == DType::S32 && i != 0 && i != 4)) continue;
        SCOPED_TRACE(std::string(cases[i].name) + " in " + n + " " + std::string(dtype_name(t)));
        uint32_t seed = sample_seed() + 1200 + uint32_t(i);
        std::vector<std::byte> split, sliced;
        {
          ScopedTuning splits("dot.splits", n);
          split = product(cases[i], t, seed);
        }
        {
          ScopedTuning slices("dot.slices", n);
          sliced = product(cases[i], t, seed);
          if (t == DType::F32) run_case(*device_, cases[i], {t, t, t}, seed);
        }
        EXPECT_TRUE(split == sliced) << "the slices' bits differ from split-K's";
      }
  // Edge checks everywhere and scalar loads.
  {
    ScopedTuning scalar("dot.gvec4", "0"), checks("dot.no_inside", "1"), slices("dot.slices", "3");
    run_case(*device_, cases[0], {DType::F32, DType::F32, DType::F32}, sample_seed() + 1210);
  }
  // The GPUs' choice: a product whose 64x64 tiles are too few takes the sliced 32x64 tile, one
  // launch with split-K's bits.
  ScopedTuning any_tile("dot.tile", "");
  const DotCase wide{"auto_128x512x1024", {128, 512}, {512, 1024}, mm};
  std::vector<std::byte> chosen = product(wide, DType::F32, sample_seed() + 1220);
  EXPECT_EQ(commands, 1u) << "one launch, no split-K pass";
  ScopedTuning split_tile("dot.tile", "32,64,16,4,4"), splits("dot.splits", "4");
  EXPECT_TRUE(product(wide, DType::F32, sample_seed() + 1220) == chosen) << "the slices' bits differ from split-K's";
}

// The matrix-vector kernel as a GPU runs it: four outputs per invocation in vector loads,
// k split across the workgroup's invocations and across workgroups (split-K, a second pass
// adding the splits), k adjacent (a row per group of invocations), batches.
TEST_F(Dot, GpuMatvecPaths) {
  ScopedTuning gpu("gpu_paths", "1");
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
  ScopedTuning splits("dot.splits", "5");
  run_case(*device_, cases[3], {DType::F32, DType::F32, DType::F32}, sample_seed() + 430);
}

// NX_VULKAN_DOT_F32=bf16x3: f32 GEMMs through bf16 parts (dot_bf16x3.hpp) within 2^-15 of
// sum |a| |b| (plus f32 accumulation) of the exact product, on every layout; forced onto any
// device's GEMM tiers (dot.bf16x3_any=1) where it has no bf16 tensor cores. Dropping the lo
// parts would miss that bound (about 2^-9 per product, and K here stays under 2^12). An
// infinity multiplies as one, NaN stays NaN, matrix-vector shapes keep the f32 kernels, and
// without the switch or the tensor cores nothing changes.
TEST_F(Dot, Bf16x3ReducedPrecisionMode) {
  ScopedTuning no_blas("host_blas", "0");  // CPU drivers' BLAS tier would come first
  auto launches = [&](const std::function<void()>& f) {
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    f();
    device_->synchronize();
    return device_->stream_stats().commands - before;
  };
  const DotCase square = dot_cases()[4];  // 130x260x72
  ScopedTuning one_split("dot.splits", "1");  // launches counted without split-K's sums
  auto run_square = [&] { run_case(*device_, square, {DType::F32, DType::F32, DType::F32}, sample_seed() + 950); };
  uint64_t plain = launches(run_square);
  bool tensor_cores = false;
  {
    ScopedTuning mode("dot.f32", "bf16x3");
    GemmOperand parts{{}, DType::BF16, {0, 0, 1}};
    tensor_cores = coopmat_gemm_tile(*device_->impl().core, {1, 130, 72, 780}, parts, parts, DType::F32).has_value();
    // Without tensor cores (or on a CPU driver) the switch alone changes nothing.
    if (!tensor_cores) EXPECT_EQ(launches(run_square), plain);
  }
  ScopedTuning mode("dot.f32", "bf16x3");
  ScopedTuning any("dot.bf16x3_any", "1");
  EXPECT_EQ(launches([&] { run_case(*device_, square, {DType::F32, DType::F32, DType::F32}, sample_seed() + 951, 0, 0x1p-15); }),
            plain + 2)
      << "two splits, then the GEMM";
  ScopedTuning any_splits("dot.splits", "");
  auto cases = dot_cases();
  for (size_t i = 0; i < cases.size(); ++i)
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 960 + uint32_t(i), 0, 0x1p-15);
  ScopedTuning splits("dot.splits", "3");
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

// CPU drivers: f32/f64 products go to the system's OpenBLAS (dot_host.hpp) where it loads.
// The other tests run the kernels (test_main turns this tier off unless asked for).
TEST_F(Dot, HostBlasTier) {
  if (device_->impl().core->info().type != "cpu" || !host_blas_available())
    GTEST_SKIP() << "the host BLAS tier needs a CPU driver and libopenblas.so.0";
  ScopedTuning on("host_blas", "1");
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
    ScopedTuning by_size("host_blas", "");
    Tensor big = from_host(dev, DType::F32, {64, 64}, std::vector<float>(4096, 0.5f).data(), 4096 * 4);
    commands = dev.stream_stats().commands;
    Tensor sq = run_op(dev, "dot", {DType::F32, {64, 64}}, {big, big}, mm);
    EXPECT_EQ(dev.stream_stats().commands, commands);
    EXPECT_EQ(download<float>(dev, sq), std::vector<float>(4096, 16.0f));
    run_op(dev, "dot", {DType::F32, {2, 2}}, {nx, ty}, mm);
    EXPECT_GT(dev.stream_stats().commands, commands);
  }
  // Off: the kernels take it.
  ScopedTuning off("host_blas", "0");
  commands = dev.stream_stats().commands;
  Tensor k = run_op(dev, "dot", {DType::F32, {2, 2}}, {nx, ty}, mm);
  EXPECT_GT(dev.stream_stats().commands, commands);
  EXPECT_EQ(download<float>(dev, run_op(dev, "add", {DType::F32, {2, 2}}, {k, k})), want);
}

// The host BLAS tier splits products of several 2^20 multiply-adds over host threads
// (host_threads=3 here, on any machine): along batch items, along rows or columns of each
// item (uneven last parts), with operands read transposed or through padded rows.
TEST_F(Dot, HostBlasSplitsProducts) {
  if (device_->impl().core->info().type != "cpu" || !host_blas_available())
    GTEST_SKIP() << "the host BLAS tier needs a CPU driver and libopenblas.so.0";
  ScopedTuning on("host_blas", "1"), threads("host_threads", "3");
  DotAttrs mm = axes({1}, {}, {0}, {}), batched = axes({2}, {0}, {1}, {0});
  const DotCase cases[] = {
      {"rows_300x97x130", {300, 97}, {97, 130}, mm},
      {"columns_130x97x300", {130, 97}, {97, 300}, mm},
      {"batches_4x70x90x130", {4, 70, 90}, {4, 90, 130}, batched},
      {"rows_of_each_batch_2x200x80x120", {2, 200, 80}, {2, 80, 120}, batched},
      {"transposed_both_160x150x140", {160, 150}, {150, 140}, mm, kTransposed, kTransposed},
      {"padded_rows_150x90x250", {150, 90}, {90, 250}, mm, kPaddedRows},
  };
  bool f64 = device_->has(kCapFloat64);
  for (size_t i = 0; i < std::size(cases); ++i)
    for (DType t : {DType::F32, DType::F64})
      if (t == DType::F32 || f64) run_case(*device_, cases[i], {t, t, t}, sample_seed() + 950 + uint32_t(i));
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
