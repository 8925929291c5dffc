// Dot epilogues (ops/dot/dot_epilogue.hpp) and their graph fusion (graph/epilogue_fusion.hpp):
// a dot with an elementwise chain applied where it stores gives, bit for bit, the dot followed
// by the chain's ops run one by one through the same engine, on every tier lavapipe runs (rows,
// cpu, matvec; with gpu_paths the SIMT tile and the GPU matvec; with dot.splits
// split-K's final sum; with dot.slices the sliced tile's shared store), on shapes with empty outputs, K = 0, 1 x N, N = 1 and sizes straddling
// the tiles; and against a host reference (integers exactly; floats within the dot's error
// bound plus a few roundings of the output type); with NaN, infinities, signed zeros and
// subnormals too (bit for bit). A graph's dot and elementwise consumers
// become one kernel; a chain that cannot fuse (chain_rounding) stays separate kernels.
#include <cmath>
#include <cstring>

#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct Problem {
  int64_t batch, m, k, n;  // batch 0: unbatched
};

const Problem kProblems[] = {
    {0, 0, 5, 7},  {0, 5, 0, 7},   {0, 1, 9, 12},  {0, 1, 9, 13},  {0, 13, 9, 1},   {0, 1, 1, 1},
    {0, 33, 17, 65}, {2, 31, 67, 8}, {0, 17, 11, 31}, {3, 7, 5, 9}, {0, 65, 130, 33}, {0, 70, 96, 10},
};

DotAttrs matmul(bool batched) {
  DotAttrs a;
  a.left_contract = {batched ? 2 : 1};
  a.right_contract = {batched ? 1 : 0};
  if (batched) a.left_batch = {0}, a.right_batch = {0};
  return a;
}

Shape left_shape(const Problem& p) { return p.batch ? Shape{p.batch, p.m, p.k} : Shape{p.m, p.k}; }
Shape right_shape(const Problem& p) { return p.batch ? Shape{p.batch, p.k, p.n} : Shape{p.k, p.n}; }
Shape out_shape(const Problem& p) { return p.batch ? Shape{p.batch, p.m, p.n} : Shape{p.m, p.n}; }

// A random tensor of shape `out` stored transposed (strides {1, m} over its last two axes).
Tensor transposed_residual(Device& d, DType t, const Shape& out, std::mt19937& rng) {
  Shape stored = out;
  std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
  std::vector<int64_t> perm(out.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose_view(random_tensor(d, t, stored, rng), perm);
}

// A problem's random operands of type `t`, its output's shape and the dot's attributes.
struct Operands {
  Tensor l, r;
  Shape out;
  DotAttrs a;
};
Operands operands(Device& d, DType t, const Problem& p, std::mt19937& rng) {
  Tensor l = random_tensor(d, t, left_shape(p), rng);
  Tensor r = random_tensor(d, t, right_shape(p), rng);
  return {l, r, out_shape(p), matmul(p.batch > 0)};
}

// The dot, then each step as its own op.
Tensor unfused(Device& d, const Tensor& l, const Tensor& r, const DotAttrs& a, DType product, const Shape& out,
               const std::vector<Tensor>& extras, const ElementwiseChain& chain) {
  std::vector<Tensor> inputs{run_op(d, OpId::dot, {product, out}, {l, r}, Attrs::of(a))};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_steps_one_by_one(d, inputs, chain, out);
}

Tensor fused(Device& d, const Tensor& l, const Tensor& r, DotAttrs a, DType product, const Shape& out,
             const std::vector<Tensor>& extras, const ElementwiseChain& chain) {
  a.epilogue = chain;
  a.product = product;
  std::vector<Tensor> inputs{l, r};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_op(d, OpId::dot, {chain.steps.back().out, out}, inputs, Attrs::of(a));
}

// relu(left . right + bias) on the host: integers wrap in 32 bits; floats within the dot's
// bound and three roundings of the output type.
void expect_bias_relu_reference(Device& d, DType t, const Problem& p, const Tensor& l, const Tensor& r,
                                const Tensor& bias, const Tensor& got) {
  if (got.size() == 0) return;
  auto lb = to_host(d, l), rb = to_host(d, r), bb = to_host(d, bias), gb = to_host(d, got);
  size_t e = dtype_size(t);
  int64_t batches = std::max<int64_t>(p.batch, 1);
  size_t failures = 0;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        size_t o = size_t((b * p.m + i) * p.n + j);
        const std::byte* have = gb.data() + o * e;
        if (is_integer(t)) {
          uint32_t acc = 0;
          for (int64_t k = 0; k < p.k; ++k)
            acc += uint32_t(int_at(t, lb.data() + size_t((b * p.m + i) * p.k + k) * e)) *
                   uint32_t(int_at(t, rb.data() + size_t((b * p.k + k) * p.n + j) * e));
          int32_t want = std::max<int32_t>(int32_t(acc + uint32_t(int_at(t, bb.data() + size_t(j) * e))), 0);
          int32_t h = 0;
          std::memcpy(&h, have, 4);
          if (h != want && failures++ < 5) ADD_FAILURE() << "output " << o << ": " << h << ", expected " << want;
          continue;
        }
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          double x = typed_value_at(t, lb.data() + size_t((b * p.m + i) * p.k + k) * e).real();
          double y = typed_value_at(t, rb.data() + size_t((b * p.k + k) * p.n + j) * e).real();
          acc += x * y;
          mag += std::abs(x * y);
        }
        double bias_v = typed_value_at(t, bb.data() + size_t(j) * e).real();
        double want = std::max(acc + bias_v, 0.0);
        double eps_acc = t == DType::F64 ? 0x1p-53 : 0x1p-24;
        double tol = double(p.k + 2) * eps_acc * mag + 3 * type_epsilon(t) * (std::abs(acc) + std::abs(bias_v)) + 1e-30;
        double h = typed_value_at(t, have).real();
        if (!(std::abs(h - want) <= tol) && failures++ < 5)
          ADD_FAILURE() << "output " << o << ": " << h << ", expected " << want << " (tolerance " << tol << ")";
      }
}

// Fused and unfused products are compared bit for bit on the same tier: the cooperative-matrix
// tiers (GPUs, f16/bf16) have no epilogue, so they stay off here (their own tests are in dot_test).
class DotEpilogues : public DeviceTest {
 protected:
  ScopedTuning no_coopmat_{"dot.no_coopmat", "1"};
  std::vector<DType> types() {
    std::vector<DType> t{DType::F32, DType::F16, DType::BF16, DType::S32};
    if (device_->has(kCapFloat64)) t.push_back(DType::F64);
    return t;
  }
};

// The tiers as lavapipe runs them: its own (rows, cpu, matvec), the GPU's (SIMT tile, matvec
// across lanes), split-K (the epilogue in the final sum) and the tile kernel on CPU shapes.
struct PathConfig {
  const char* name;
  const char* gpu_paths;
  const char* splits;
  const char* no_cpu_gemm;
  const char* slices = "";
};
const PathConfig kPaths[] = {{"cpu tiers", "0", "", "0"},
                             {"gpu tiers", "1", "", "0"},
                             {"gpu tiers, split-K 3", "1", "3", "0"},
                             {"gpu tiers, k in 3 slices", "1", "", "0", "3"},
                             {"tile kernel on the cpu path", "0", "", "1"}};

TEST_F(DotEpilogues, BiasReluEveryTierAndType) {
  Device& d = *device_;
  ElementwiseChain chain;
  for (const PathConfig& path : kPaths) {
    ScopedTuning gpu("gpu_paths", path.gpu_paths), splits("dot.splits", path.splits), slices("dot.slices", path.slices),
        no_cpu("dot.no_cpu_gemm", path.no_cpu_gemm);
    for (DType t : types()) {
      chain.steps = {step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})};
      std::mt19937 rng(sample_seed() + uint32_t(t));
      // Every problem on lavapipe's own tiers; a sample on the others (all with NXV_TEST_EXHAUSTIVE=1).
      std::vector<Problem> problems(std::begin(kProblems), std::end(kProblems));
      if (&path != &kPaths[0]) problems = sample_cases(problems, 5);
      for (const Problem& p : problems) {
        SCOPED_TRACE(std::string(path.name) + ", " + std::string(dtype_name(t)) + ", batch " + std::to_string(p.batch) + " m " +
                     std::to_string(p.m) + " k " + std::to_string(p.k) + " n " + std::to_string(p.n));
        Tensor l = random_tensor(d, t, left_shape(p), rng), r = random_tensor(d, t, right_shape(p), rng);
        std::vector<Tensor> extras{random_tensor(d, t, {p.n}, rng), scalar(d, t, 0)};
        DotAttrs a = matmul(p.batch > 0);
        Tensor want = unfused(d, l, r, a, t, out_shape(p), extras, chain);
        Tensor got = fused(d, l, r, a, t, out_shape(p), extras, chain);
        expect_same_bits(d, want, got);
        expect_bias_relu_reference(d, t, p, l, r, extras[0], got);
      }
    }
  }
}

// Four tensors beside the product (the most an epilogue reads): a leapfrog-style update
// p + h * (acc - q) * s + b, with p and q of the output's shape, h a scalar, s a row scale
// ({m, 1}) and b a bias ({n}); every tier, f32 and f64; and as graph nodes, one kernel.
TEST_F(DotEpilogues, FourTensorsBesideTheProduct) {
  Device& d = *device_;
  std::vector<DType> types{DType::F32};
  if (device_->has(kCapFloat64)) types.push_back(DType::F64);
  const Problem problems[] = {{0, 17, 33, 31}, {0, 70, 96, 10}, {2, 5, 3, 12}, {0, 1, 9, 12}};
  for (const PathConfig& path : kPaths) {
    ScopedTuning gpu("gpu_paths", path.gpu_paths), splits("dot.splits", path.splits), slices("dot.slices", path.slices),
        no_cpu("dot.no_cpu_gemm", path.no_cpu_gemm);
    for (DType t : types) {
      std::mt19937 rng(sample_seed() + 150 + uint32_t(t));
      ElementwiseChain chain{{step(OpId::subtract, t, {in(0), in(2)}), step(OpId::multiply, t, {st(0), in(3)}),
                              step(OpId::multiply, t, {st(1), in(4)}), step(OpId::add, t, {in(1), st(2)})}};
      for (const Problem& p : problems) {
        SCOPED_TRACE(std::string(path.name) + ", " + std::string(dtype_name(t)) + ", m " + std::to_string(p.m) + " n " +
                     std::to_string(p.n));
        auto [l, r, out, a] = operands(d, t, p, rng);
        std::vector<Tensor> extras{random_tensor(d, t, out, rng), random_tensor(d, t, out, rng), scalar(d, t, 0.125),
                                   random_tensor(d, t, {p.m, 1}, rng)};
        // (the chain reads p, q, h, s: inputs 1..4)
        expect_same_bits(d, unfused(d, l, r, a, t, out, extras, chain), fused(d, l, r, a, t, out, extras, chain));
      }
    }
  }
  // As graph nodes: the dot and its consumers over four other tensors are one launch.
  GpuDotPaths gpu_dots;
  const int64_t m = 40, k = 24, n = 8;
  std::mt19937 rng(sample_seed() + 160);
  std::vector<Tensor> inputs{random_tensor(d, DType::F32, {m, k}, rng), random_tensor(d, DType::F32, {k, n}, rng),
                             random_tensor(d, DType::F32, {m, n}, rng), random_tensor(d, DType::F32, {m, n}, rng),
                             scalar(d, DType::F32, 0.5), random_tensor(d, DType::F32, {n}, rng)};
  Graph g;
  uint32_t x = g.input(DType::F32, {m, k}), w = g.input(DType::F32, {k, n}), pv = g.input(DType::F32, {m, n}),
           qv = g.input(DType::F32, {m, n}), h = g.input(DType::F32, {}), b = g.input(DType::F32, {n});
  uint32_t prod = g.add(OpId::dot, {DType::F32, {m, n}}, {x, w}, Attrs::of(matmul(false)));
  uint32_t diff = g.add(OpId::subtract, {DType::F32, {m, n}}, {prod, qv});
  uint32_t scaled = g.add(OpId::multiply, {DType::F32, {m, n}}, {diff, h});
  uint32_t biased = g.add(OpId::add, {DType::F32, {m, n}}, {scaled, b});
  g.output(g.add(OpId::add, {DType::F32, {m, n}}, {pv, biased}));
  GraphExecutable program = compile_graph(d, g, inputs);
  EXPECT_EQ(program.executable().launches().size(), 1u);
  Tensor want = run_op(d, OpId::dot, {DType::F32, {m, n}}, {inputs[0], inputs[1]}, Attrs::of(matmul(false)));
  want = run_op(d, OpId::subtract, {DType::F32, {m, n}}, {want, inputs[3]});
  want = run_op(d, OpId::multiply, {DType::F32, {m, n}}, {want, inputs[4]});
  want = run_op(d, OpId::add, {DType::F32, {m, n}}, {want, inputs[5]});
  want = run_op(d, OpId::add, {DType::F32, {m, n}}, {inputs[2], want});
  expect_same_bits(d, want, program.run(d, inputs)[0]);
}

// tanh, sigmoid (and spelled out: 1 / (1 + exp(-x))), a strided residual (read in place, and
// copied where its axis groups do not collapse), and an output type other than the product's.
TEST_F(DotEpilogues, ActivationsResidualsAndTypeChanges) {
  Device& d = *device_;
  std::vector<DType> floats{DType::F32, DType::F16, DType::BF16};
  if (device_->has(kCapFloat64)) floats.push_back(DType::F64);
  // (m 70, k 96, n 10: on GPUs, a matrix-vector product per column; m 10, n 70: one per row.
  // Each places its outputs in the dot's coordinates for the epilogue its own way.)
  const Problem problems[] = {{0, 1, 7, 9}, {0, 9, 7, 1}, {0, 17, 33, 31}, {2, 5, 3, 12}, {0, 70, 96, 10}, {0, 10, 96, 70}};
  for (const PathConfig& path : {kPaths[0], kPaths[2]}) {
    ScopedTuning gpu("gpu_paths", path.gpu_paths), splits("dot.splits", path.splits), slices("dot.slices", path.slices);
    for (DType t : floats) {
      std::mt19937 rng(sample_seed() + 100 + uint32_t(t));
      for (const Problem& p : problems) {
        SCOPED_TRACE(std::string(path.name) + ", " + std::string(dtype_name(t)) + ", m " + std::to_string(p.m) + " n " +
                     std::to_string(p.n));
        auto [l, r, out, a] = operands(d, t, p, rng);
        Tensor bias = random_tensor(d, t, {p.n}, rng), one = scalar(d, t, 1);
        ElementwiseChain tanh_chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::tanh, t, {st(0)})}};
        ElementwiseChain sigmoid{{step(OpId::add, t, {in(0), in(1)}), step(OpId::sigmoid, t, {st(0)})}};
        ElementwiseChain spelled{{step(OpId::add, t, {in(0), in(1)}), step(OpId::negate, t, {st(0)}),
                                  step(OpId::exp, t, {st(1)}), step(OpId::add, t, {st(2), in(2)}),
                                  step(OpId::divide, t, {in(2), st(3)})}};
        {
          SCOPED_TRACE("tanh");
          expect_same_bits(d, unfused(d, l, r, a, t, out, {bias}, tanh_chain), fused(d, l, r, a, t, out, {bias}, tanh_chain));
        }
        {
          SCOPED_TRACE("sigmoid");
          expect_same_bits(d, unfused(d, l, r, a, t, out, {bias}, sigmoid), fused(d, l, r, a, t, out, {bias}, sigmoid));
        }
        // 1 / (1 + exp(-x)): where a step computes through doubles (division on a device with
        // f64), exp's float code would run under the f64 float controls: chain_rounding keeps
        // such a chain out of the dot, and check says why.
        DotAttrs with = a;
        with.epilogue = spelled, with.product = t;
        std::vector<TensorSpec> specs{spec_of(l), spec_of(r), spec_of(bias), spec_of(one)};
        Support s = check_op(d, OpId::dot, {t, out}, specs, Attrs::of(with));
        if (s) {
          expect_same_bits(d, unfused(d, l, r, a, t, out, {bias, one}, spelled),
                           fused(d, l, r, a, t, out, {bias, one}, spelled));
        } else {
          EXPECT_EQ(s.kind, ErrorKind::Unsupported);
          EXPECT_NE(s.reason.find("float controls"), std::string::npos) << s.reason;
        }
        Tensor residual = transposed_residual(d, t, out, rng);
        ElementwiseChain res{{step(OpId::add, t, {in(0), in(1)}), step(OpId::multiply, t, {st(0), in(2)})}};
        Tensor half = scalar(d, t, 0.5);
        SCOPED_TRACE("transposed residual");
        expect_same_bits(d, unfused(d, l, r, a, t, out, {residual, half}, res),
                         fused(d, l, r, a, t, out, {residual, half}, res));
        // A bias per row ({m, 1}: broadcast along the columns and any batch).
        Tensor row_bias = random_tensor(d, t, {p.m, 1}, rng);
        ElementwiseChain add{{step(OpId::add, t, {in(0), in(1)})}};
        SCOPED_TRACE("row bias");
        expect_same_bits(d, unfused(d, l, r, a, t, out, {row_bias}, add), fused(d, l, r, a, t, out, {row_bias}, add));
        // f32 product and bias add, stored as f16.
        ElementwiseChain narrow{{step(OpId::add, t, {in(0), in(1)}), step(OpId::as_type, DType::F16, {st(0)})}};
        SCOPED_TRACE("f16 result");
        expect_same_bits(d, unfused(d, l, r, a, t, out, {bias}, narrow), fused(d, l, r, a, t, out, {bias}, narrow));
      }
    }
  }
  // Two left free axes: a residual transposed across them does not collapse (copied first).
  std::mt19937 rng(sample_seed() + 7);
  DType t = DType::F32;
  Tensor l = random_tensor(d, t, {2, 3, 5}, rng), r = random_tensor(d, t, {5, 6}, rng);
  DotAttrs a = matmul(false);
  a.left_contract = {2};
  Tensor residual = transpose_view(random_tensor(d, t, {3, 2, 6}, rng), {1, 0, 2});
  ElementwiseChain add{{step(OpId::add, t, {in(0), in(1)})}};
  expect_same_bits(d, unfused(d, l, r, a, t, {2, 3, 6}, {residual}, add), fused(d, l, r, a, t, {2, 3, 6}, {residual}, add));
}

// The GPU kernels give the epilogue each output's batch, row and column rather than its index:
// the tile kernel from its tile, the matrix-vector kernel from where its vectors and rows lie in
// the product (per row, per column, M = 1 with one output or four adjacent ones an invocation,
// N = 1, batched). A residual stored transposed and a bias per row read each coordinate, against
// the ops one by one, unsplit.
TEST_F(DotEpilogues, GpuKernelsGiveTheEpilogueEachOutputsCoordinates) {
  Device& d = *device_;
  ScopedTuning gpu("gpu_paths", "1"), whole("dot.splits", "1");
  const DType t = DType::F32;
  std::mt19937 rng(sample_seed() + 17);
  const Problem problems[] = {{0, 10, 96, 70}, {0, 70, 96, 10}, {2, 1, 96, 70}, {2, 1, 96, 72}, {2, 70, 96, 1}, {2, 33, 70, 65}};
  for (const Problem& p : problems) {
    SCOPED_TRACE("batch " + std::to_string(p.batch) + " m " + std::to_string(p.m) + " k " + std::to_string(p.k) +
                 " n " + std::to_string(p.n));
    auto [l, r, out, a] = operands(d, t, p, rng);
    Tensor residual = transposed_residual(d, t, out, rng);
    Tensor row_bias = random_tensor(d, t, {p.m, 1}, rng);
    ElementwiseChain chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::multiply, t, {st(0), in(2)})}};
    expect_same_bits(d, unfused(d, l, r, a, t, out, {residual, row_bias}, chain),
                     fused(d, l, r, a, t, out, {residual, row_bias}, chain));
  }
}

// NaN, infinities, signed zeros and subnormals in the operands and the bias: the same bits as
// the ops one by one.
TEST_F(DotEpilogues, SpecialValues) {
  Device& d = *device_;
  const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-40, -1e-42, 3e38, 0.75, -1.5};
  auto special_tensor = [&](DType t, const Shape& shape, std::mt19937& rng) {
    auto bytes = random_typed_values(t, size_t(shape_size(shape)), rng);
    size_t e = dtype_size(t);
    for (size_t i = 0; i < bytes.size() / e; ++i)
      if (rng() % 3 == 0) store_real(t, specials[rng() % std::size(specials)], bytes.data() + i * e);
    return from_host(d, t, shape, bytes.data(), bytes.size());
  };
  std::vector<DType> floats{DType::F32, DType::F16, DType::BF16};
  if (d.has(kCapFloat64)) floats.push_back(DType::F64);
  for (const PathConfig& path : {kPaths[0], kPaths[2]}) {
    ScopedTuning gpu("gpu_paths", path.gpu_paths), splits("dot.splits", path.splits), slices("dot.slices", path.slices);
    for (DType t : floats) {
      SCOPED_TRACE(std::string(path.name) + ", " + std::string(dtype_name(t)));
      std::mt19937 rng(sample_seed() + 200 + uint32_t(t));
      const Problem p{0, 9, 6, 12};
      Tensor l = special_tensor(t, left_shape(p), rng), r = special_tensor(t, right_shape(p), rng);
      std::vector<Tensor> extras{special_tensor(t, {p.n}, rng), scalar(d, t, 0)};
      ElementwiseChain relu{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
      ElementwiseChain tanh_chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::tanh, t, {st(0)})}};
      DotAttrs a = matmul(false);
      expect_same_bits(d, unfused(d, l, r, a, t, out_shape(p), extras, relu), fused(d, l, r, a, t, out_shape(p), extras, relu));
      expect_same_bits(d, unfused(d, l, r, a, t, out_shape(p), {extras[0]}, tanh_chain),
                       fused(d, l, r, a, t, out_shape(p), {extras[0]}, tanh_chain));
    }
  }
}

TEST_F(DotEpilogues, CheckRefusesWhatItCannotFuse) {
  Device& d = *device_;
  DotAttrs a = matmul(false);
  a.product = DType::F32;
  a.epilogue = ElementwiseChain{{step(OpId::add, DType::F32, {in(0), in(1)})}};
  TensorSpec l = contiguous_spec(DType::F32, {3, 4}), r = contiguous_spec(DType::F32, {4, 5});
  TensorSpec ok[] = {l, r, contiguous_spec(DType::F32, {5})};
  EXPECT_TRUE(check_op(d, OpId::dot, {DType::F32, {3, 5}}, ok, Attrs::of(a)));
  TensorSpec bad_shape[] = {l, r, contiguous_spec(DType::F32, {4})};
  Support s = check_op(d, OpId::dot, {DType::F32, {3, 5}}, bad_shape, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  TensorSpec too_many[] = {l, r, ok[2], ok[2], ok[2], ok[2], ok[2]};  // five beside the product
  EXPECT_FALSE(check_op(d, OpId::dot, {DType::F32, {3, 5}}, too_many, Attrs::of(a)));
  TensorSpec three[] = {l, r, ok[2]};
  DotAttrs plain = matmul(false);
  EXPECT_FALSE(check_op(d, OpId::dot, {DType::F32, {3, 5}}, three, Attrs::of(plain)));
  if (!d.has(kCapFloat64)) return;
  // exp computes in float through several roundings; an f64 tensor puts the f64 float controls
  // on the kernel: chain_rounding splits such a chain, so the epilogue refuses it.
  a.epilogue = ElementwiseChain{{step(OpId::exp, DType::F32, {in(0)}), step(OpId::add, DType::F64, {st(0), in(1)})}};
  TensorSpec f64_bias[] = {l, r, contiguous_spec(DType::F64, {5})};
  s = check_op(d, OpId::dot, {DType::F64, {3, 5}}, f64_bias, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported);
  EXPECT_NE(s.reason.find("float controls"), std::string::npos) << s.reason;
}

// dot -> add bias -> max 0 as graph nodes: one kernel where the unfused graph has three.
TEST_F(DotEpilogues, GraphFusesBiasAndActivation) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 11);
  for (DType t : {DType::F32, DType::S32, DType::F16}) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t M = 19, K = 23, N = 37;
    std::vector<Tensor> inputs{random_tensor(d, t, {M, K}, rng), random_tensor(d, t, {K, N}, rng),
                               random_tensor(d, t, {N}, rng), scalar(d, t, 0)};
    auto build = [&](bool dot_is_output, bool as_chain) {
      Graph g;
      uint32_t l = g.input(t, {M, K}), r = g.input(t, {K, N}), bias = g.input(t, {N}), zero = g.input(t, {});
      uint32_t prod = g.add(OpId::dot, {t, {M, N}}, {l, r}, Attrs::of(matmul(false)));
      uint32_t y;
      if (as_chain) {
        ElementwiseChain c{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
        y = g.add(OpId::elementwise_chain, {t, {M, N}}, {prod, bias, zero}, Attrs::of(c));
      } else {
        uint32_t biased = g.add(OpId::add, {t, {M, N}}, {bias, prod});
        y = g.add(OpId::max, {t, {M, N}}, {biased, zero});
      }
      g.output(y);
      if (dot_is_output) g.output(prod);
      return compile_graph(d, g, inputs);
    };
    Graph dot_only;
    {
      uint32_t l = dot_only.input(t, {M, K}), r = dot_only.input(t, {K, N});
      dot_only.output(dot_only.add(OpId::dot, {t, {M, N}}, {l, r}, Attrs::of(matmul(false))));
    }
    size_t dot_launches = compile_graph(d, dot_only, {inputs[0], inputs[1]}).executable().launches().size();
    GraphExecutable nodes = build(false, false), chain = build(false, true), separate = build(true, false);
    EXPECT_EQ(nodes.executable().launches().size(), dot_launches);
    EXPECT_EQ(chain.executable().launches().size(), dot_launches);
    EXPECT_EQ(separate.executable().launches().size(), dot_launches + 1);  // add and max: one chain
    Tensor want = separate.run(d, inputs)[0];
    expect_same_bits(d, want, nodes.run(d, inputs)[0]);
    expect_same_bits(d, want, chain.run(d, inputs)[0]);
    // And the unfused ops one by one, eagerly.
    Tensor eager = run_op(d, OpId::max, {t, {M, N}},
                          {run_op(d, OpId::add, {t, {M, N}},
                                  {inputs[2], run_op(d, OpId::dot, {t, {M, N}}, {inputs[0], inputs[1]},
                                                     Attrs::of(matmul(false)))},
                                  Attrs{}),
                           inputs[3]},
                          Attrs{});
    expect_same_bits(d, eager, want);
  }
}

// An epilogue chain_rounding would split stays the dot and the chain's own kernels, with the
// values of the ops run one by one.
TEST_F(DotEpilogues, GraphLeavesUnfusibleChainSeparate) {
  Device& d = *device_;
  if (!d.has(kCapFloat64)) GTEST_SKIP() << "needs f64";
  std::mt19937 rng(sample_seed() + 13);
  const int64_t M = 9, K = 14, N = 11;
  std::vector<Tensor> inputs{random_tensor(d, DType::F32, {M, K}, rng), random_tensor(d, DType::F32, {K, N}, rng),
                             random_tensor(d, DType::F64, {N}, rng)};
  ElementwiseChain c{{step(OpId::exp, DType::F32, {in(0)}), step(OpId::add, DType::F64, {st(0), in(1)})}};
  Graph g;
  uint32_t l = g.input(DType::F32, {M, K}), r = g.input(DType::F32, {K, N}), bias = g.input(DType::F64, {N});
  uint32_t prod = g.add(OpId::dot, {DType::F32, {M, N}}, {l, r}, Attrs::of(matmul(false)));
  g.output(g.add(OpId::elementwise_chain, {DType::F64, {M, N}}, {prod, bias}, Attrs::of(c)));
  GraphExecutable exec = compile_graph(d, g, inputs);
  Graph dot_only;
  {
    uint32_t a = dot_only.input(DType::F32, {M, K}), b = dot_only.input(DType::F32, {K, N});
    dot_only.output(dot_only.add(OpId::dot, {DType::F32, {M, N}}, {a, b}, Attrs::of(matmul(false))));
  }
  size_t dot_launches = compile_graph(d, dot_only, {inputs[0], inputs[1]}).executable().launches().size();
  EXPECT_EQ(exec.executable().launches().size(), dot_launches + 2);  // exp, then add
  Tensor want = unfused(d, inputs[0], inputs[1], matmul(false), DType::F32, {M, N}, {inputs[2]}, c);
  expect_same_bits(d, want, exec.run(d, inputs)[0]);
  // A dot read twice is not fused either.
  Graph twice;
  {
    uint32_t a = twice.input(DType::F32, {M, K}), b = twice.input(DType::F32, {K, N});
    uint32_t p = twice.add(OpId::dot, {DType::F32, {M, N}}, {a, b}, Attrs::of(matmul(false)));
    twice.output(twice.add(OpId::multiply, {DType::F32, {M, N}}, {p, p}));
    twice.output(twice.add(OpId::exp, {DType::F32, {M, N}}, {p}));
  }
  EXPECT_EQ(compile_graph(d, twice, {inputs[0], inputs[1]}).executable().launches().size(), dot_launches + 2);
}

}  // namespace
