// Graph chain fusion (graph/chain_fusion.hpp) where the sole-reader rule alone falls short:
// around a split (chain_rounding: float math of several roundings, exp f32, and code that uses
// f64, f32 division where the device has f64, do not share a kernel), and through values
// several chains read (computed again in each). Programs give the bits of their ops run one by
// one.
#include "graph/graph.hpp"
#include "op_case_util.hpp"
#include "ops/shape/shape_attrs.hpp"

using namespace nxv;
using namespace nxv::test;

TEST(ChainFusion, FloatMathBesideF64CodeFormsChainsOfOneKernelEach) {
  auto dev = shared_device();
  const int64_t n = 300;  // over one workgroup
  const DType t = DType::F32;
  // sigmoid spelled out as a gradient gives it: y * (1 / (1 + exp(-|x|))) - y
  Graph g;
  uint32_t x = g.input(t, {n}), y = g.input(t, {n}), one = g.input(t, {});
  uint32_t a = g.add(OpId::abs, {t, {n}}, {x});
  uint32_t neg = g.add(OpId::negate, {t, {n}}, {a});
  uint32_t e = g.add(OpId::exp, {t, {n}}, {neg});
  uint32_t den = g.add(OpId::add, {t, {n}}, {one, e});
  uint32_t q = g.add(OpId::divide, {t, {n}}, {one, den});
  uint32_t m = g.add(OpId::multiply, {t, {n}}, {y, q});
  g.output(g.add(OpId::subtract, {t, {n}}, {m, y}));
  auto program = compile_program(*dev, g);
  std::mt19937 rng(11);
  Tensor xv = random_tensor(*dev, t, {n}, rng), yv = random_tensor(*dev, t, {n}, rng), ov = scalar(*dev, t, 1);
  auto op = [&](OpId id, std::vector<Tensor> in) { return run_op(*dev, id, OutSpec{t, {n}}, in, Attrs{}); };
  Tensor eager = op(OpId::subtract,
                    {op(OpId::multiply, {yv, op(OpId::divide, {ov, op(OpId::add, {ov, op(OpId::exp, {op(OpId::negate, {op(OpId::abs, {xv})})})})})}), yv});
  expect_same_bits(*dev, eager, program->run(*dev, {xv, yv, ov})[0]);
  // Where division uses f64, exp's chain and division's are two kernels; else one. Before,
  // the one chain node ran step by step: seven kernels.
  EXPECT_EQ(program->stats().launches, dev->has(kCapFloat64) ? 2u : 1u);
}

// exp(x) read by two chains and returned by neither: each chain computes it; a producer whose
// recomputation would be large (many steps for several readers) keeps its own kernel.
TEST(ChainFusion, ASharedProducerIsComputedInEachReader) {
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  auto dev = shared_device();
  const int64_t n = 300;
  const DType t = DType::F32;
  std::mt19937 rng(12);
  Tensor xv = random_tensor(*dev, t, {n}, rng), yv = random_tensor(*dev, t, {n}, rng);
  auto op = [&](OpId id, std::vector<Tensor> in) { return run_op(*dev, id, OutSpec{t, {n}}, in, Attrs{}); };
  for (int steps : {1, 5}) {
    SCOPED_TRACE(std::to_string(steps) + " steps");
    Graph g;
    uint32_t x = g.input(t, {n}), y = g.input(t, {n});
    uint32_t e = x;
    for (int s = 0; s < steps; ++s) e = g.add(s % 2 ? OpId::negate : OpId::exp, {t, {n}}, {e});
    g.output(g.add(OpId::add, {t, {n}}, {e, y}));
    g.output(g.add(OpId::multiply, {t, {n}}, {e, x}));
    g.output(g.add(OpId::subtract, {t, {n}}, {y, e}));
    auto program = compile_program(*dev, g);
    auto outs = program->run(*dev, {xv, yv});
    Tensor ev = xv;
    for (int s = 0; s < steps; ++s) ev = op(s % 2 ? OpId::negate : OpId::exp, {ev});
    expect_same_bits(*dev, op(OpId::add, {ev, yv}), outs[0]);
    expect_same_bits(*dev, op(OpId::multiply, {ev, xv}), outs[1]);
    expect_same_bits(*dev, op(OpId::subtract, {yv, ev}), outs[2]);
    // One step for two more readers: recomputed (3 kernels). Five steps: 10 more, kept (4).
    EXPECT_EQ(program->stats().launches, steps == 1 ? 3u : 4u);
  }
}

// Elementwise nodes over four to eight tensors, each the output's shape or a single element,
// fuse into one chain (elementwise_wide.comp): every type family, operands that are scalars,
// and an operand that a transpose node gives as a view (copied row-major first); the ops' bits.
TEST(ChainFusion, ChainsOverFourToEightTensorsAreOneKernel) {
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  auto dev = shared_device();
  const Shape shape{7, 45};  // over one workgroup
  std::vector<DType> types{DType::F32, DType::S32, DType::U8, DType::F16};
  if (dev->has(kCapFloat64)) types.push_back(DType::F64);
  for (DType t : types) {
    for (size_t width : {4u, 6u, 8u}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + ", " + std::to_string(width) + " tensors");
      std::mt19937 rng(uint32_t(width) * 31 + uint32_t(t));
      // r = ((((x0 + x1) * x2) - x3) max x4) + x5 ...: an op per extra tensor, alternating.
      const OpId ops[] = {OpId::add, OpId::multiply, OpId::subtract, OpId::max, OpId::min};
      Graph g;
      std::vector<uint32_t> in;
      std::vector<Tensor> values;
      for (size_t k = 0; k < width; ++k) {
        bool single = k == 2 || k == 5;  // scalars among them
        // Operand 1 is a transpose node's result: a view the chain's kernel reads row-major.
        Shape s = single ? Shape{} : k == 1 ? Shape{shape[1], shape[0]} : shape;
        in.push_back(g.input(t, s));
        values.push_back(random_tensor(*dev, t, s, rng));
      }
      ShapeAttrs swap;
      swap.axes = {1, 0};
      uint32_t transposed = g.add(OpId::transpose, {t, shape}, {in[1]}, Attrs::of(swap));
      uint32_t r = in[0];
      for (size_t k = 1; k < width; ++k) r = g.add(ops[(k - 1) % 5], {t, shape}, {r, k == 1 ? transposed : in[k]});
      g.output(r);
      auto program = compile_program(*dev, g);
      // The chain, and the transposed operand's copy.
      EXPECT_EQ(program->stats().launches, 2u);
      Tensor eager = values[0];
      for (size_t k = 1; k < width; ++k) {
        Tensor operand = k == 1 ? run_op(*dev, OpId::transpose, OutSpec{t, shape}, {values[1]}, Attrs::of(swap)) : values[k];
        eager = run_op(*dev, ops[(k - 1) % 5], OutSpec{t, shape}, {eager, operand}, Attrs{});
      }
      expect_same_bits(*dev, eager, program->run(*dev, values)[0]);
    }
  }
}
