// Level scheduling (graph/level_schedule.hpp): a program's independent launches run between the
// same barriers. Two independent products each followed by a reduction record as both products,
// one barrier, both reductions: one barrier where op order gives two, and the same results.
// The memory plan on the levels (graph/memory_plan.hpp): intermediates in levels apart share
// buffers, run after run, with the bits of the ops run eagerly.
#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

TEST(LevelSchedule, IndependentLaunchesShareBarriers) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // kernels, not host steps
  ScopedTuning per_node{"program.region", "0"};  // the sums as launches of their own, not a region
  const int64_t m = 33, k = 20, n = 17;
  Graph g;
  uint32_t x = g.input(DType::F32, {m, k});
  uint32_t w1 = g.input(DType::F32, {k, n});
  uint32_t w2 = g.input(DType::F32, {k, n});
  DotAttrs d = contracting(1, 0);
  ReduceAttrs all;
  uint32_t p = g.add(OpId::dot, {DType::F32, {m, n}}, {x, w1}, Attrs::of(d));
  g.output(g.add(OpId::sum, {DType::F32, {}}, {p}, Attrs::of(all)));
  uint32_t q = g.add(OpId::dot, {DType::F32, {m, n}}, {x, w2}, Attrs::of(d));
  g.output(g.add(OpId::sum, {DType::F32, {}}, {q}, Attrs::of(all)));
  auto program = compile_program(*dev, g);
  ASSERT_EQ(program->stats().launches, 4u);
  std::mt19937 rng(5);
  Tensor xv = random_tensor(*dev, DType::F32, {m, k}, rng);
  Tensor w1v = random_tensor(*dev, DType::F32, {k, n}, rng);
  Tensor w2v = random_tensor(*dev, DType::F32, {k, n}, rng);
  dev->synchronize();
  auto& stream = dev->impl().stream;
  auto before = stream.stats();
  auto outs = program->run(*dev, {xv, w1v, w2v});
  EXPECT_EQ(stream.stats().barriers - before.barriers, 1u);
  for (auto [w, i] : {std::pair{w1v, 0}, std::pair{w2v, 1}}) {
    Tensor eager = run_op(*dev, OpId::dot, {DType::F32, {m, n}}, {xv, w}, Attrs::of(d));
    expect_same_bits(*dev, run_op(*dev, OpId::sum, {DType::F32, {}}, {eager}, Attrs::of(all)), outs[size_t(i)]);
  }
}

// Two layers of a product, a row sum and its subtraction: the second layer's intermediates
// take the buffers of the first's (levels apart), a branch beside them (the same levels) its
// own; fewer bytes a run, the ops' bits, twice.
TEST(LevelSchedule, IntermediatesInLevelsApartShareBuffers) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // kernels, not host steps (which keep the order: no levels, no plan)
  const int64_t m = 48, k = 40, n = 40;
  DotAttrs d = contracting(1, 0);
  ReduceAttrs rows;
  rows.all_axes = false, rows.axes = {1}, rows.keep_axes = true;
  std::mt19937 rng(6);
  std::vector<Tensor> inputs{random_tensor(*dev, DType::F32, {m, k}, rng), random_tensor(*dev, DType::F32, {k, n}, rng),
                             random_tensor(*dev, DType::F32, {n, n}, rng)};
  Graph g;
  uint32_t x = g.input(DType::F32, {m, k}), w1 = g.input(DType::F32, {k, n}), w2 = g.input(DType::F32, {n, n});
  auto layer = [&](uint32_t in, uint32_t w) {
    uint32_t p = g.add(OpId::dot, {DType::F32, {m, n}}, {in, w}, Attrs::of(d));
    uint32_t s = g.add(OpId::sum, {DType::F32, {m, 1}}, {p}, Attrs::of(rows));
    return g.add(OpId::subtract, {DType::F32, {m, n}}, {p, s});
  };
  uint32_t h = layer(x, w1);
  uint32_t beside = g.add(OpId::exp, {DType::F32, {m, k}}, {x});
  g.output(layer(h, w2));
  g.output(g.add(OpId::sum, {DType::F32, {m, 1}}, {beside}, Attrs::of(rows)));
  GraphExecutable program = compile_graph(*dev, g, inputs);
  const uint64_t layer_bytes = uint64_t(m * n * 4);
  EXPECT_LE(program.bytes_per_run(true) + layer_bytes, program.bytes_per_run(false));
  auto eager_layer = [&](const Tensor& in, const Tensor& w) {
    Tensor p = run_op(*dev, OpId::dot, {DType::F32, {m, n}}, {in, w}, Attrs::of(d));
    Tensor s = run_op(*dev, OpId::sum, {DType::F32, {m, 1}}, {p}, Attrs::of(rows));
    return run_op(*dev, OpId::subtract, {DType::F32, {m, n}}, {p, s});
  };
  Tensor want = eager_layer(eager_layer(inputs[0], inputs[1]), inputs[2]);
  Tensor want_beside = run_op(*dev, OpId::sum, {DType::F32, {m, 1}},
                              {run_op(*dev, OpId::exp, {DType::F32, {m, k}}, {inputs[0]})}, Attrs::of(rows));
  for (int run = 0; run < 2; ++run) {
    auto outs = program.run(*dev, inputs);
    expect_same_bits(*dev, want, outs[0]);
    expect_same_bits(*dev, want_beside, outs[1]);
  }
}
