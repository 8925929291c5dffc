// Regions (graph/region_forming.cpp, ops/region/): programs whose small nodes run as one launch
// of one workgroup of the loop kernel's code give the bits of their ops run one by one, as the
// same programs lowered a kernel per node (program.region=0) do; programs it does not take; a
// region's inputs laid out otherwise.
#include <optional>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "loop_graphs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// `g` (all of it small) compiles to one launch, and so to a kernel per node, each with the bits
// of its ops run one by one.
void expect_one_launch_program(const Graph& g, const std::vector<Tensor>& inputs) {
  auto dev = shared_device();
  auto want = run_eagerly(*dev, g, inputs);
  std::optional<ScopedTuning> on(std::in_place, "program.region", "1");  // CPU drivers too
  auto region = compile_program(*dev, g);
  EXPECT_EQ(region->stats().launches, 1u);
  auto outs = region->run(*dev, inputs);
  ASSERT_EQ(outs.size(), want.size());
  for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], outs[j]);
  on.reset();
  ScopedTuning per_node{"program.region", "0"};
  auto lowered = compile_program(*dev, g);
  EXPECT_GT(lowered->stats().launches, 1u);
  auto again = lowered->run(*dev, inputs);
  for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], again[j]);
}

}  // namespace

TEST(RegionKernel, ASmallProgramIsOneLaunchWithTheBitsOfItsOps) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "no f64";
  ScopedTuning no_blas{"host_blas", "0"};
  // A leapfrog step (products, a sigmoid, an f32 and a u8 branch; its last three outputs its
  // inputs, stored as copies), on the CPU driver's plans and the GPUs'.
  expect_one_launch_program(leapfrog(200, 8), leapfrog_inputs(*dev, 200, 8));
  {
    GpuDotPaths gpu;
    expect_one_launch_program(leapfrog(300, 5), leapfrog_inputs(*dev, 300, 5));
  }
  // Sums over rows and columns, max, all and any, conversions; f32 and f64, sizes across the
  // workgroup's 256 invocations.
  std::mt19937 rng(23);
  for (DType f : {DType::F32, DType::F64})
    for (auto [n, d] : {std::pair<int64_t, int64_t>{150, 4}, {257, 3}, {1, 1}}) {
      SCOPED_TRACE(std::string(dtype_name(f)) + " " + std::to_string(n) + "x" + std::to_string(d));
      expect_one_launch_program(fit_steps(f, 0, n, d), {random_tensor(*dev, f, {d}, rng), random_tensor(*dev, f, {n, d}, rng),
                                                        random_tensor(*dev, f, {n}, rng)});
    }
  // Integers, a broadcast and a transposed view as outputs.
  Graph g;
  uint32_t a = g.input(DType::S32, {3, 5}), b = g.input(DType::S32, {5}), fill = g.input(DType::S32, {});
  uint32_t m = g.add(OpId::multiply, {DType::S32, {3, 5}}, {a, b});
  uint32_t s = g.add(OpId::add, {DType::S32, {3, 5}}, {m, g.add(OpId::negate, {DType::S32, {5}}, {b})});
  ShapeAttrs t;
  t.axes = {1, 0};
  g.output(g.add(OpId::transpose, {DType::S32, {5, 3}}, {s}, Attrs::of(t)));
  ShapeAttrs to_rows;
  to_rows.axes = {1};
  g.output(g.add(OpId::broadcast, {DType::S32, {2, 5}}, {b}, Attrs::of(to_rows)));
  // Padding: low, high, negative (cropping) and interior, its value an input.
  ShapeAttrs pad;
  pad.padding = {{2, -1, 1}, {-2, 3, 0}};
  g.output(g.add(OpId::pad, {DType::S32, {6, 6}}, {s, fill}, Attrs::of(pad)));
  expect_one_launch_program(g, {random_tensor(*dev, DType::S32, {3, 5}, rng), random_tensor(*dev, DType::S32, {5}, rng),
                                random_tensor(*dev, DType::S32, {}, rng)});
  // An f32 pad widened to f64 beside f64 values (a gradient's pad of a slice).
  Graph w;
  uint32_t x = w.input(DType::F32, {4}), y = w.input(DType::F64, {7});
  ShapeAttrs wide;
  wide.padding = {{1, 2, 0}};
  uint32_t zero = w.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(0));
  uint32_t padded = w.add(OpId::pad, {DType::F64, {7}}, {x, zero}, Attrs::of(wide));
  w.output(w.add(OpId::multiply, {DType::F64, {7}}, {padded, w.add(OpId::exp, {DType::F64, {7}}, {y})}));
  expect_one_launch_program(w, {random_tensor(*dev, DType::F32, {4}, rng), random_tensor(*dev, DType::F64, {7}, rng)});
}

TEST(RegionKernel, ProgramsItDoesNotTakeLaunchAKernelPerNode) {
  auto dev = shared_device();
  ScopedTuning on{"program.region", "1"};
  std::mt19937 rng(29);
  auto per_node = [&](const Graph& g, const std::vector<Tensor>& inputs) {
    auto program = compile_program(*dev, g);
    EXPECT_GT(program->stats().launches, 1u);
    auto want = run_eagerly(*dev, g, inputs);
    auto outs = program->run(*dev, inputs);
    for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], outs[j]);
  };
  {
    Graph g;  // a value over the size
    uint32_t x = g.input(DType::F32, {20000});
    g.output(g.add(OpId::sin, {DType::F32, {20000}}, {g.add(OpId::exp, {DType::F32, {20000}}, {x})}));
    ReduceAttrs all;
    g.output(g.add(OpId::sum, {DType::F32, {}}, {x}, Attrs::of(all)));
    per_node(g, {random_tensor(*dev, DType::F32, {20000}, rng)});
  }
  {
    Graph g;  // a matrix product, then a sum
    uint32_t x = g.input(DType::F32, {8, 8});
    uint32_t p = g.add(OpId::dot, {DType::F32, {8, 8}}, {x, x}, Attrs::of(contracting(1, 0)));
    ReduceAttrs all;
    g.output(g.add(OpId::sum, {DType::F32, {}}, {p}, Attrs::of(all)));
    per_node(g, {random_tensor(*dev, DType::F32, {8, 8}, rng)});
  }
  {
    Graph g;  // a donation, which the graph's lowering honours in place
    uint32_t w = g.input(DType::F32, {16}), dw = g.input(DType::F32, {16});
    uint32_t next = g.add(OpId::subtract, {DType::F32, {16}}, {w, g.add(OpId::multiply, {DType::F32, {16}}, {dw, dw})});
    ReduceAttrs all;
    g.output(next);
    g.output(g.add(OpId::sum, {DType::F32, {}}, {next}, Attrs::of(all)));
    g.donate(w, 0);
    auto program = compile_program(*dev, g);
    EXPECT_GT(program->stats().launches, 1u);
    EXPECT_EQ(program->stats().in_place, 1u);
  }
}

// A region is formed over row-major stand-ins; inputs laid out otherwise (a transposed view)
// are read through their strides, or where the code refuses them, the graph compiles again
// with a kernel per node. Either way the bits are the eager ops'.
TEST(RegionKernel, InputsLaidOutOtherwiseReadThroughTheirStrides) {
  auto dev = shared_device();
  ScopedTuning on{"program.region", "1"};
  std::mt19937 rng(31);
  const DType f = DType::F32;
  Graph g;
  uint32_t x = g.input(f, {6, 5}), q = g.input(f, {5});
  uint32_t y = g.add(OpId::multiply, {f, {6, 5}}, {g.add(OpId::exp, {f, {6, 5}}, {x}), x});
  ReduceAttrs rows;
  rows.all_axes = false;
  rows.axes = {1};
  g.output(g.add(OpId::sum, {f, {6}}, {y}, Attrs::of(rows)));
  g.output(g.add(OpId::dot, {f, {6}}, {x, q}, Attrs::of(contracting(1, 0))));
  Tensor stored = random_tensor(*dev, f, {5, 6}, rng);
  Tensor xt = stored;  // x as the transpose of a row-major {5, 6}
  xt.shape = {6, 5};
  xt.strides = {1, 6};
  Tensor qv = random_tensor(*dev, f, {5}, rng);
  auto exec = compile_graph(*dev, g, {xt, qv});
  auto outs = exec.run(*dev, {xt, qv});
  auto want = run_eagerly(*dev, g, {xt, qv});
  for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], outs[j]);
}

// A reduction of each row of `v` ([rows, columns]) broadcast back to its shape.
static uint32_t row_reduction(Graph& g, OpId op, uint32_t v) {
  const OutSpec s = g.value(v);  // a copy: adding nodes moves the values
  ReduceAttrs along;
  along.all_axes = false;
  along.axes = {1};
  ShapeAttrs back;
  back.axes = {0};
  return g.add(OpId::broadcast, s, {g.add(op, {s.type, {s.shape[0]}}, {v}, Attrs::of(along))}, Attrs::of(back));
}

// A softmax over rows of [256, 10] and its normalisation, several times over, every value a
// result: float math (exp) and a division that computes in f64 never share a region (their
// kernels' float controls differ), and regions whose values outgrow the workgroup's shared
// memory run as halves. Fewer launches than a kernel per node; the eager ops' bits.
TEST(RegionKernel, FloatMathAndF64KeepApartAndLargeRegionsRunInHalves) {
  auto dev = shared_device();
  std::mt19937 rng(37);
  const DType f = DType::F32;
  const Shape rows{256, 10};
  Graph g;
  uint32_t v = g.input(f, rows);
  for (int k = 0; k < 6; ++k) {
    uint32_t peak = row_reduction(g, OpId::reduce_max, v);
    uint32_t e = g.add(OpId::exp, {f, rows}, {g.add(OpId::subtract, {f, rows}, {v, peak})});
    uint32_t total = row_reduction(g, OpId::sum, e);
    v = g.add(OpId::divide, {f, rows}, {e, total});
    g.output(e);
    g.output(v);
  }
  std::vector<Tensor> inputs{random_tensor(*dev, f, rows, rng)};
  auto want = run_eagerly(*dev, g, inputs);
  size_t per_node_launches = 0;
  {
    ScopedTuning per_node{"program.region", "0"};
    per_node_launches = compile_program(*dev, g)->stats().launches;
  }
  ScopedTuning on{"program.region", "1"};
  auto program = compile_program(*dev, g);
  EXPECT_LT(program->stats().launches, per_node_launches);
  EXPECT_GT(program->stats().launches, 1u);
  auto outs = program->run(*dev, inputs);
  ASSERT_EQ(outs.size(), want.size());
  for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], outs[j]);
  // On the GPUs' plans too.
  GpuDotPaths gpu;
  auto planned = compile_program(*dev, g);
  EXPECT_LT(planned->stats().launches, per_node_launches);
  auto again = planned->run(*dev, inputs);
  for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], again[j]);
}

// Eight row shifts of [16, 128] in a chain, every value a result: each result leaves shared
// memory once it is stored and read, so the region needs two or three values' room, not
// eight (64 KiB, above any device's workgroup memory here): one launch, the eager ops' bits.
TEST(RegionKernel, ResultsLeaveSharedMemoryOnceStored) {
  auto dev = shared_device();
  std::mt19937 rng(41);
  const DType f = DType::F32;
  const Shape rows{16, 128};
  Graph g;
  uint32_t v = g.input(f, rows);
  for (int k = 0; k < 8; ++k) {
    v = g.add(OpId::subtract, {f, rows}, {row_reduction(g, OpId::reduce_max, v), v});
    g.output(v);
  }
  std::vector<Tensor> inputs{random_tensor(*dev, f, rows, rng)};
  auto want = run_eagerly(*dev, g, inputs);
  ScopedTuning on{"program.region", "1"};
  for (bool gpu_plans : {false, true}) {
    std::optional<GpuDotPaths> gpu;
    if (gpu_plans) gpu.emplace();
    auto program = compile_program(*dev, g);
    EXPECT_EQ(program->stats().launches, 1u) << (gpu_plans ? "GPU plans" : "default plans");
    auto outs = program->run(*dev, inputs);
    ASSERT_EQ(outs.size(), want.size());
    for (size_t j = 0; j < want.size(); ++j) expect_same_bits(*dev, want[j], outs[j]);
  }
}
