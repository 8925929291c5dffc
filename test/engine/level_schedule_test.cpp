// Level scheduling (graph/level_schedule.hpp): a program's independent launches run between the
// same barriers. Two independent products each followed by a reduction record as both products,
// one barrier, both reductions: one barrier where op order gives two, and the same results.
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
