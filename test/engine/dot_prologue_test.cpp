// Dot operand prologues (ops/dot/dot_prologue.hpp) and their graph fusion
// (graph/prologue_fusion.hpp): products that read an elementwise chain's result as an operand
// (relu(z) in an MLP's forward product and in its weight gradient) each apply the chain where
// they load that operand, and the chain's kernel and buffer go. On the GPUs' tiers as lavapipe
// runs them (the SIMT tile with edges, inside, split-K, in slices; the matrix-vector kernel per
// row, per column, with M or N of 1), f32 and f64, the operand on the left, transposed, and on
// the right: bit for bit the graph's ops run one by one. Elsewhere the chain stays a kernel.
#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "loop_graphs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct Case {
  int64_t m, k, n;
  const char* splits;
  const char* slices;
};

// Graph: r = max(z, 0) [m, k]; y = r . w [m, n]; dw = r^T . g [k, n]; u = q . r [5, k]; the
// three products read r, as a graph output too where `relu_out`.
Graph relu_products(DType t, const Case& c, bool relu_out) {
  Graph g;
  uint32_t z = g.input(t, {c.m, c.k}), w = g.input(t, {c.k, c.n}), grad = g.input(t, {c.m, c.n});
  uint32_t q = g.input(t, {5, c.m});
  uint32_t zero = g.add(OpId::constant, {t, {}}, {}, constant_attrs(0.0));
  uint32_t r = g.add(OpId::max, {t, {c.m, c.k}}, {z, zero});
  g.output(g.add(OpId::dot, {t, {c.m, c.n}}, {r, w}, Attrs::of(contracting(1, 0))));
  g.output(g.add(OpId::dot, {t, {c.k, c.n}}, {r, grad}, Attrs::of(contracting(0, 0))));
  g.output(g.add(OpId::dot, {t, {5, c.k}}, {q, r}, Attrs::of(contracting(1, 0))));
  if (relu_out) g.output(r);
  return g;
}

std::vector<Tensor> relu_inputs(Device& d, DType t, const Case& c, std::mt19937& rng) {
  return {random_tensor(d, t, {c.m, c.k}, rng), random_tensor(d, t, {c.k, c.n}, rng),
          random_tensor(d, t, {c.m, c.n}, rng), random_tensor(d, t, {5, c.m}, rng)};
}

class DotPrologues : public DeviceTest {
 protected:
  std::vector<DType> types() {
    std::vector<DType> t{DType::F32};
    if (device_->has(kCapFloat64)) t.push_back(DType::F64);
    return t;
  }
};

TEST_F(DotPrologues, SharedActivationIsEachProductsPrologue) {
  Device& d = *device_;
  GpuDotPaths gpu;
  // (Regions would take an M = 1 product and its operand's chain into one kernel.)
  ScopedTuning no_regions("program.region", "0");
  std::mt19937 rng(sample_seed() + 41);
  const Case cases[] = {
      {33, 17, 65, "", ""},   // tiles with edges
      {64, 128, 96, "", ""},  // tiles inside, four-wide loads
      {70, 96, 10, "", ""},   // one matrix-vector product per column (y), per row (u)
      {10, 96, 70, "", ""},   // per row (y)
      {65, 130, 1, "", ""},   // N = 1
      {1, 130, 65, "", ""},   // M = 1
      {32, 600, 64, "3", ""}, // split-K
      {32, 600, 64, "", "3"}, // k in slices
  };
  for (DType t : types())
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
                   std::to_string(c.n) + " splits " + c.splits + " slices " + c.slices);
      ScopedTuning splits("dot.splits", c.splits), slices("dot.slices", c.slices);
      std::vector<Tensor> inputs = relu_inputs(d, t, c, rng);
      GraphExecutable fused = compile_graph(d, relu_products(t, c, false), inputs);
      GraphExecutable kept = compile_graph(d, relu_products(t, c, true), inputs);
      // The relu's kernel goes where its result is no output.
      EXPECT_EQ(fused.executable().launches().size() + 1, kept.executable().launches().size());
      std::vector<Tensor> want = run_eagerly(d, relu_products(t, c, true), inputs);
      std::vector<Tensor> got = fused.run(d, inputs), also = kept.run(d, inputs);
      for (size_t i = 0; i < 3; ++i) {
        SCOPED_TRACE("product " + std::to_string(i));
        expect_same_bits(d, want[i], got[i]);
        expect_same_bits(d, want[i], also[i]);
      }
    }
}

// NaN, infinities and signed zeros through a prologue (max keeps NaN; -0.0 and 0 tie): the
// bits of the ops one by one.
TEST_F(DotPrologues, SpecialValues) {
  Device& d = *device_;
  GpuDotPaths gpu;
  const Case c{40, 24, 12, "", ""};
  std::vector<float> z(size_t(c.m * c.k));
  std::mt19937 rng(sample_seed() + 43);
  std::uniform_real_distribution<float> u(-2, 2);
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f};
  for (size_t i = 0; i < z.size(); ++i) z[i] = i % 7 == 0 ? specials[(i / 7) % 6] : u(rng);
  std::vector<Tensor> inputs = relu_inputs(d, DType::F32, c, rng);
  inputs[0] = from_host(d, DType::F32, {c.m, c.k}, z.data(), z.size() * sizeof(float));
  std::vector<Tensor> want = run_eagerly(d, relu_products(DType::F32, c, true), inputs);
  std::vector<Tensor> got = compile_graph(d, relu_products(DType::F32, c, false), inputs).run(d, inputs);
  for (size_t i = 0; i < 3; ++i) expect_same_bits(d, want[i], got[i]);
}

// Where the product would run on a tier without prologues (a CPU driver's own kernels and its
// BLAS), the chain stays a kernel of its own, with the same values.
TEST_F(DotPrologues, OtherTiersKeepTheChain) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 47);
  const Case c{33, 17, 65, "", ""};
  std::vector<Tensor> inputs = relu_inputs(d, DType::F32, c, rng);
  ScopedTuning cpu("gpu_paths", "0");
  if (!d.impl().core->profile().cpu_driver) GTEST_SKIP() << "a GPU takes its own tiers";
  GraphExecutable fused = compile_graph(d, relu_products(DType::F32, c, false), inputs);
  GraphExecutable kept = compile_graph(d, relu_products(DType::F32, c, true), inputs);
  EXPECT_EQ(fused.executable().launches().size(), kept.executable().launches().size());
  std::vector<Tensor> want = run_eagerly(d, relu_products(DType::F32, c, true), inputs);
  std::vector<Tensor> got = fused.run(d, inputs);
  for (size_t i = 0; i < 3; ++i) expect_same_bits(d, want[i], got[i]);
}

// The check: a prologue of another type than its operand's is malformed; an f16 product (the
// tensor cores' tier) takes none.
TEST_F(DotPrologues, CheckRefusesWhatItCannotRun) {
  Device& d = *device_;
  GpuDotPaths gpu;
  DotAttrs a = contracting(1, 0);
  a.prologue[0] = ElementwiseChain{{step(OpId::exp, DType::F64, {in(0)})}};
  std::vector<TensorSpec> f32{contiguous_spec(DType::F32, {4, 3}), contiguous_spec(DType::F32, {3, 5})};
  Support s = check_op(d, OpId::dot, {DType::F32, {4, 5}}, f32, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument) << s.reason;
  a.prologue[0] = ElementwiseChain{{step(OpId::exp, DType::F16, {in(0)})}};
  std::vector<TensorSpec> f16{contiguous_spec(DType::F16, {4, 3}), contiguous_spec(DType::F16, {3, 5})};
  s = check_op(d, OpId::dot, {DType::F16, {4, 5}}, f16, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported) << s.reason;
  a.prologue[0] = ElementwiseChain{{step(OpId::exp, DType::F32, {in(0)})}};
  EXPECT_TRUE(check_op(d, OpId::dot, {DType::F32, {4, 5}}, f32, Attrs::of(a)).native);
  if (!d.has(kCapFloat64)) return;
  // f32 divided by an s32 computes in f64: beside float math of several roundings (exp) in the
  // same kernel, prologue or epilogue, the f64 float controls would change the float math's bits.
  ElementwiseChain in_f64{{step(OpId::divide, DType::F32, {in(0), ChainOperand{ChainOperand::From::Constant, 0}})},
                          {ChainConstant{DType::S32, AttrNumber{AttrNumber::Kind::Int, 3, 0, 0, 0}}}};
  ElementwiseChain float_math{{step(OpId::exp, DType::F32, {in(0)})}};
  DotAttrs alone = contracting(1, 0);
  alone.prologue[0] = in_f64;
  EXPECT_TRUE(check_op(d, OpId::dot, {DType::F32, {4, 5}}, f32, Attrs::of(alone)).native);
  DotAttrs with_epilogue = alone;
  with_epilogue.epilogue = float_math;
  with_epilogue.product = DType::F32;
  EXPECT_FALSE(check_op(d, OpId::dot, {DType::F32, {4, 5}}, f32, Attrs::of(with_epilogue)).native);
  DotAttrs two = alone;
  two.prologue[1] = float_math;
  EXPECT_FALSE(check_op(d, OpId::dot, {DType::F32, {4, 5}}, f32, Attrs::of(two)).native);
}

}  // namespace
