// Donation (Graph::donate, graph/donation.hpp): a donated input's buffer holds its output where
// the program can write it there safely: an SGD update (an elementwise chain, and on the GPUs'
// tile a weight gradient's epilogue) writes the new weights over the old, with the bits of the
// program run without donation. Kept apart: an input another launch of the same level reads,
// an output that is an input as is. Refused: a donation of another type or shape, twice.
#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

Attrs rate_attrs() {
  ShapeAttrs a;
  a.value = AttrNumber{AttrNumber::Kind::Float, 0, 0, 0.01, 0};
  return Attrs::of(a);
}

// w - 0.01 * g, with `w` donated to it where `donate`.
Graph sgd(const Shape& shape, bool donate) {
  Graph g;
  uint32_t w = g.input(DType::F32, shape);
  uint32_t grad = g.input(DType::F32, shape);
  uint32_t rate = g.add(OpId::constant, {DType::F32, {}}, {}, rate_attrs());
  uint32_t step = g.add(OpId::multiply, {DType::F32, shape}, {rate, grad});
  g.output(g.add(OpId::subtract, {DType::F32, shape}, {w, step}));
  if (donate) g.donate(w, 0);
  return g;
}

}  // namespace

TEST(Donation, AnUpdateWritesTheNewWeightsOverTheOld) {
  auto dev = shared_device();
  const Shape shape{300, 7};
  auto donated = compile_program(*dev, sgd(shape, true));
  auto plain = compile_program(*dev, sgd(shape, false));
  EXPECT_EQ(donated->stats().in_place, 1u);
  EXPECT_EQ(plain->stats().in_place, 0u);
  std::mt19937 rng(1);
  Tensor w = random_tensor(*dev, DType::F32, shape, rng);
  Tensor grad = random_tensor(*dev, DType::F32, shape, rng);
  Tensor want = plain->run(*dev, {w, grad})[0];
  Tensor got = donated->run(*dev, {w, grad})[0];
  EXPECT_EQ(got.buffer, w.buffer);
  expect_same_bits(*dev, want, got);
  // Run after run, each update on the last (the caller gave the old weights up).
  Tensor again = donated->run(*dev, {got, grad})[0];
  EXPECT_EQ(again.buffer, w.buffer);
  expect_same_bits(*dev, plain->run(*dev, {want, grad})[0], again);
}

TEST(Donation, AWeightGradientsEpilogueWritesOverTheWeights) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // kernels, not host steps
  const int64_t k = 40, m = 33, n = 65;
  auto build = [&](bool donate) {
    Graph g;
    uint32_t x = g.input(DType::F32, {k, m});
    uint32_t dy = g.input(DType::F32, {k, n});
    uint32_t w = g.input(DType::F32, {m, n});
    DotAttrs d = contracting(0, 0);
    uint32_t dw = g.add(OpId::dot, {DType::F32, {m, n}}, {x, dy}, Attrs::of(d));
    uint32_t rate = g.add(OpId::constant, {DType::F32, {}}, {}, rate_attrs());
    uint32_t step = g.add(OpId::multiply, {DType::F32, {m, n}}, {rate, dw});
    g.output(g.add(OpId::subtract, {DType::F32, {m, n}}, {w, step}));
    if (donate) g.donate(w, 0);
    return compile_program(*dev, g);
  };
  auto donated = build(true), plain = build(false);
  EXPECT_EQ(donated->stats().launches, 1u);
  EXPECT_EQ(donated->stats().in_place, 1u);
  std::mt19937 rng(2);
  Tensor x = random_tensor(*dev, DType::F32, {k, m}, rng);
  Tensor dy = random_tensor(*dev, DType::F32, {k, n}, rng);
  Tensor w = random_tensor(*dev, DType::F32, {m, n}, rng);
  Tensor want = plain->run(*dev, {x, dy, w})[0];
  Tensor got = donated->run(*dev, {x, dy, w})[0];
  EXPECT_EQ(got.buffer, w.buffer);
  expect_same_bits(*dev, want, got);
}

TEST(Donation, KeptApartWhereAnotherLaunchStillReadsTheInput) {
  auto dev = shared_device();
  ScopedTuning gpu("gpu_paths", "1");
  const Shape shape{64};
  Graph g;
  uint32_t w = g.input(DType::F32, shape);
  uint32_t grad = g.input(DType::F32, shape);
  g.output(g.add(OpId::subtract, {DType::F32, shape}, {w, grad}));
  ReduceAttrs all;
  g.output(g.add(OpId::sum, {DType::F32, {}}, {w}, Attrs::of(all)));  // the same level
  g.output(grad);
  g.donate(w, 0);
  EXPECT_THROW(g.donate(w, 0), Error);            // twice
  EXPECT_THROW(g.donate(grad, 1), Error);         // another shape
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().in_place, 0u);
  std::mt19937 rng(3);
  Tensor wv = random_tensor(*dev, DType::F32, shape, rng);
  Tensor gv = random_tensor(*dev, DType::F32, shape, rng);
  auto outs = program->run(*dev, {wv, gv});
  EXPECT_NE(outs[0].buffer, wv.buffer);
  expect_same_bits(*dev, run_op(*dev, OpId::sum, {DType::F32, {}}, {wv}, Attrs::of(all)), outs[1]);
}
