// Constants folded into elementwise chains (graph/fold.hpp, chain_constant_literal): a graph's
// constant nodes read by elementwise nodes become values in the chains' code, with the bits of
// the constant op and the elementwise ops run one by one: every type (narrow integers wrap as
// Nx converts, f64-only values round to f32 as Nx rounds, f16 and bf16 through an as_type step
// on the device), values that cannot be literals (an f32 subnormal) left as nodes, a constant
// several nodes read copied into each chain while a reduction still reads the node, which is
// computed once when the program is compiled.
#include <cmath>

#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

AttrNumber integer(int64_t i) { return AttrNumber{AttrNumber::Kind::Int, i, 0, 0, 0}; }
AttrNumber real(double x) { return AttrNumber{AttrNumber::Kind::Float, 0, 0, x, 0}; }
AttrNumber complex_number(double re, double im) { return AttrNumber{AttrNumber::Kind::Complex, 0, 0, re, im}; }

Attrs constant_attrs(const AttrNumber& v) {
  ShapeAttrs a;
  a.value = v;
  return Attrs::of(a);
}

struct Case {
  DType type;
  AttrNumber a, b;  // out = (x * a) + b, then - a
};

}  // namespace

TEST(ChainConstants, ConstantsBecomeChainValuesWithTheEagerBits) {
  auto dev = shared_device();
  const int64_t n = 300;  // over one workgroup
  const Case cases[] = {
      {DType::F32, real(0.01), real(-2.5)},          // 0.01 is held in f64 and rounded to f32
      {DType::F64, real(0.1), integer(3)},           // an integer value into a float type
      {DType::S8, integer(300), integer(-129)},      // wraps as Nx's as_type does
      {DType::U16, integer(70000), integer(-1)},
      {DType::S64, integer(int64_t(1) << 40), integer(-7)},
      {DType::U32, integer(4000000000LL), integer(5)},
      {DType::C64, complex_number(0.5, -0.25), real(1.0 / 3)},
      {DType::F16, real(0.01), real(3.0)},           // f16: an as_type step from f64 / f32
      {DType::BF16, real(0.5), integer(2)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.type)));
    Graph g;
    uint32_t x = g.input(c.type, {n});
    uint32_t ka = g.add(OpId::constant, {c.type, {}}, {}, constant_attrs(c.a));
    uint32_t kb = g.add(OpId::constant, {c.type, {n}}, {}, constant_attrs(c.b));  // a full-size one too
    uint32_t m = g.add(OpId::multiply, {c.type, {n}}, {x, ka});
    uint32_t s = g.add(OpId::add, {c.type, {n}}, {m, kb});
    uint32_t d = g.add(OpId::subtract, {c.type, {n}}, {s, ka});  // ka read twice
    g.output(d);
    auto program = compile_program(*dev, g);
    std::mt19937 rng(7);
    Tensor xv = random_tensor(*dev, c.type, {n}, rng);
    auto outs = program->run(*dev, {xv});
    auto op = [&](OpId id, const Shape& shape, std::vector<Tensor> in, Attrs attrs = {}) {
      return run_op(*dev, id, OutSpec{c.type, shape}, in, attrs);
    };
    Tensor a = op(OpId::constant, {}, {}, constant_attrs(c.a));
    Tensor b = op(OpId::constant, {n}, {}, constant_attrs(c.b));
    Tensor eager = op(OpId::subtract, {n}, {op(OpId::add, {n}, {op(OpId::multiply, {n}, {xv, a}), b}), a});
    expect_same_bits(*dev, eager, outs[0]);
    // One kernel where the chain keeps its steps' bits in one (f16's f64 source may not).
    if (c.type != DType::F16) EXPECT_EQ(program->stats().launches, 1u);
  }
}

TEST(ChainConstants, SubnormalsStayNodesAndSharedConstantsAreCopied) {
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  auto dev = shared_device();
  const int64_t n = 70;
  Graph g;
  uint32_t x = g.input(DType::F32, {n});
  uint32_t tiny = g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(real(1e-40)));
  uint32_t half = g.add(OpId::constant, {DType::F32, {n}}, {}, constant_attrs(real(0.5)));
  uint32_t p = g.add(OpId::add, {DType::F32, {n}}, {x, tiny});
  uint32_t q = g.add(OpId::multiply, {DType::F32, {n}}, {x, half});
  uint32_t r = g.add(OpId::exp, {DType::F32, {n}}, {half});  // reads the constant alone
  ReduceAttrs sum;
  uint32_t t = g.add(OpId::sum, {DType::F32, {}}, {half}, Attrs::of(sum));
  g.output(p);
  g.output(q);
  g.output(r);
  g.output(t);
  auto program = compile_program(*dev, g);
  std::mt19937 rng(9);
  Tensor xv = random_tensor(*dev, DType::F32, {n}, rng);
  auto outs = program->run(*dev, {xv});
  auto op = [&](OpId id, const Shape& shape, std::vector<Tensor> in, Attrs attrs = {}) {
    return run_op(*dev, id, OutSpec{DType::F32, shape}, in, attrs);
  };
  Tensor tiny_v = op(OpId::constant, {}, {}, constant_attrs(real(1e-40)));
  Tensor half_v = op(OpId::constant, {n}, {}, constant_attrs(real(0.5)));
  expect_same_bits(*dev, op(OpId::add, {n}, {xv, tiny_v}), outs[0]);
  expect_same_bits(*dev, op(OpId::multiply, {n}, {xv, half_v}), outs[1]);
  expect_same_bits(*dev, op(OpId::exp, {n}, {half_v}), outs[2]);
  expect_same_bits(*dev, op(OpId::sum, {}, {half_v}, Attrs::of(sum)), outs[3]);
  // The add (of the subnormal, computed when compiled), the multiply with 0.5 inlined, the exp
  // and the sum (of the shared constant, computed when compiled: no fill per run).
  EXPECT_EQ(program->stats().launches, 4u);
  // Run after run the constants computed once stay as they were.
  auto again = program->run(*dev, {xv});
  expect_same_bits(*dev, outs[3], again[3]);
  expect_same_bits(*dev, outs[0], again[0]);
}

// Nodes grad emits twice (the same op on the same values) are one; a constant that is a graph
// output is filled per run (a caller may donate it), not shared from one computed when compiled.
TEST(ChainConstants, RepeatedNodesMergeAndOutputConstantsAreFreshPerRun) {
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  auto dev = shared_device();
  const int64_t n = 40;
  Graph g;
  uint32_t x = g.input(DType::F32, {n});
  uint32_t e1 = g.add(OpId::exp, {DType::F32, {n}}, {x});
  uint32_t e2 = g.add(OpId::exp, {DType::F32, {n}}, {x});
  ReduceAttrs sum;
  uint32_t s1 = g.add(OpId::sum, {DType::F32, {}}, {e1}, Attrs::of(sum));
  uint32_t s2 = g.add(OpId::sum, {DType::F32, {}}, {e2}, Attrs::of(sum));
  g.output(g.add(OpId::add, {DType::F32, {}}, {s1, s2}));
  g.output(g.add(OpId::constant, {DType::F32, {n}}, {}, constant_attrs(real(2.0))));
  auto program = compile_program(*dev, g);
  // Two sums (they have attributes: not merged), each computing the one exp as its prologue;
  // the add is one's epilogue, the other's result its tensor; the output's fill.
  EXPECT_EQ(program->stats().launches, 3u);
  std::mt19937 rng(4);
  Tensor xv = random_tensor(*dev, DType::F32, {n}, rng);
  auto a = program->run(*dev, {xv});
  auto b = program->run(*dev, {xv});
  EXPECT_NE(a[1].buffer, b[1].buffer);
  Tensor e = run_op(*dev, OpId::exp, {DType::F32, {n}}, {xv});
  Tensor s = run_op(*dev, OpId::sum, {DType::F32, {}}, {e}, Attrs::of(sum));
  expect_same_bits(*dev, run_op(*dev, OpId::add, {DType::F32, {}}, {s, s}), a[0]);
  expect_same_bits(*dev, run_op(*dev, OpId::constant, {DType::F32, {n}}, {}, constant_attrs(real(2.0))), b[1]);
}

// An SGD update of a weight gradient as Nx's grad gives it (the product, transposed): the
// transpose folds into the product (graph/permutation_folding.hpp), the update with its rate
// into the product's epilogue; one kernel on the GPUs' tile, the ops' bits.
TEST(ChainConstants, AnUpdateWithItsRateIsTheWeightGradientsEpilogue) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // kernels, not host steps
  const int64_t k = 48, m = 37, n = 70;
  Graph g;
  uint32_t x = g.input(DType::F32, {k, m});
  uint32_t dy = g.input(DType::F32, {k, n});
  uint32_t w = g.input(DType::F32, {n, m});
  DotAttrs d = contracting(0, 0);
  uint32_t prod = g.add(OpId::dot, {DType::F32, {m, n}}, {x, dy}, Attrs::of(d));
  ShapeAttrs t;
  t.axes = {1, 0};
  uint32_t grad = g.add(OpId::transpose, {DType::F32, {n, m}}, {prod}, Attrs::of(t));
  uint32_t rate = g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(real(0.01)));
  uint32_t step = g.add(OpId::multiply, {DType::F32, {n, m}}, {rate, grad});
  g.output(g.add(OpId::subtract, {DType::F32, {n, m}}, {w, step}));
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().launches, 1u);
  std::mt19937 rng(3);
  Tensor xv = random_tensor(*dev, DType::F32, {k, m}, rng);
  Tensor dyv = random_tensor(*dev, DType::F32, {k, n}, rng);
  Tensor wv = random_tensor(*dev, DType::F32, {n, m}, rng);
  auto outs = program->run(*dev, {xv, dyv, wv});
  auto op = [&](OpId id, const Shape& shape, std::vector<Tensor> in, Attrs attrs = {}) {
    return run_op(*dev, id, OutSpec{DType::F32, shape}, in, attrs);
  };
  Tensor eager_grad = op(OpId::transpose, {n, m}, {op(OpId::dot, {m, n}, {xv, dyv}, Attrs::of(d))}, Attrs::of(t));
  Tensor r = op(OpId::constant, {}, {}, constant_attrs(real(0.01)));
  expect_same_bits(*dev, op(OpId::subtract, {n, m}, {wv, op(OpId::multiply, {n, m}, {r, eager_grad})}), outs[0]);
}

// A small node over values known when the program compiles (a sum of a constant vector, then
// a slice of it) is computed then too: the run launches only the work on its inputs.
TEST(ChainConstants, SmallNodesOverKnownValuesAreComputedWhenCompiled) {
  auto dev = shared_device();
  const int64_t n = 70;
  const DType t = DType::S32;
  Graph g;
  uint32_t x = g.input(t, {n});
  uint32_t k = g.add(OpId::iota, {t, {4, 3}}, {}, Attrs::of(ShapeAttrs{}));  // 0 .. 11
  ReduceAttrs rows;
  rows.axes = {1};
  rows.all_axes = false;
  uint32_t sums = g.add(OpId::sum, {t, {4}}, {k}, Attrs::of(rows));  // iota's rows: 3, 12, 21, 30
  ShapeAttrs take;
  take.starts = {2};
  take.lengths = {1};
  take.steps = {1};
  uint32_t one = g.add(OpId::slice, {t, {1}}, {sums}, Attrs::of(take));
  g.output(g.add(OpId::add, {t, {n}}, {x, one}));
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().launches, 1u);
  std::mt19937 rng(3);
  Tensor xv = random_tensor(*dev, t, {n}, rng);
  Tensor want = run_op(*dev, OpId::add, OutSpec{t, {n}}, {xv, scalar(*dev, t, 21)}, Attrs{});
  for (int run = 0; run < 2; ++run) expect_same_bits(*dev, want, program->run(*dev, {xv})[0]);
}
