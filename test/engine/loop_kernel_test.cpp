// The loop kernel (ops/loop/loop_kernel.cpp): a counted loop's trips in one launch give the
// bits of the body's ops run one by one, trip after trip. The body of an HMC trajectory on a
// logistic regression (two matrix-vector products per gradient, a sigmoid, the leapfrog
// updates; f64 with an f32 and a u8 branch) on the CPU driver's plans and the GPUs' (whose
// products split each sum over lanes); a counter and views in the state; bodies it refuses.
#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "loop_graphs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// The body `trips` times, op by op: the state after them.
std::vector<Tensor> trips_eagerly(Device& d, const Graph& body, std::vector<Tensor> inputs, size_t state, uint32_t trips) {
  for (uint32_t t = 0; t < trips; ++t) {
    auto next = run_eagerly(d, body, inputs);
    for (size_t j = 0; j < state; ++j) inputs[j] = next[j];
  }
  inputs.resize(state);
  return inputs;
}

void expect_leapfrog_trips(int64_t n, int64_t d, uint32_t trips) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "no f64";
  Graph body = leapfrog(n, d);
  auto program = compile_loop_program(*dev, body, 5, trips);
  EXPECT_EQ(program->stats().launches, 1u);
  auto inputs = leapfrog_inputs(*dev, n, d);
  auto outs = program->run(*dev, inputs);
  auto want = trips_eagerly(*dev, body, inputs, 5, trips);
  ASSERT_EQ(outs.size(), 5u);
  for (size_t j = 0; j < 5; ++j) expect_same_bits(*dev, want[j], outs[j]);
  // The unchanged state is the input itself.
  EXPECT_EQ(outs[2].buffer, inputs[2].buffer);
  // Again, on new state: nothing of the first run is kept.
  auto again = program->run(*dev, {outs[0], outs[1], inputs[2], inputs[3], inputs[4]});
  auto want_again = trips_eagerly(*dev, body, {want[0], want[1], inputs[2], inputs[3], inputs[4]}, 5, trips);
  for (size_t j = 0; j < 2; ++j) expect_same_bits(*dev, want_again[j], again[j]);
}

// The same over `c` chains (q and p vectorized: axis 0), x broadcast to every chain as Nx's
// vectorized dot does (or, `own_x`, each chain's own x), the products batched over the chains.
Graph leapfrog_chains(int64_t c, int64_t n, int64_t d, bool own_x = false) {
  const DType f = DType::F64;
  Graph g;
  uint32_t q = g.input(f, {c, d}), p = g.input(f, {c, d}), x = own_x ? g.input(f, {c, n, d}) : g.input(f, {n, d});
  uint32_t y = g.input(f, {n}), h = g.input(f, {});
  ShapeAttrs to_chains;
  to_chains.axes = {1, 2};
  uint32_t xb = own_x ? x : g.add(OpId::broadcast, {f, {c, n, d}}, {x}, Attrs::of(to_chains));
  DotAttrs rows = contracting(2, 1), columns = contracting(1, 1);
  rows.left_batch = rows.right_batch = columns.left_batch = columns.right_batch = {0};
  auto grad = [&](uint32_t at) {
    uint32_t z = g.add(OpId::dot, {f, {c, n}}, {xb, at}, Attrs::of(rows));
    uint32_t s = g.add(OpId::sigmoid, {f, {c, n}}, {z});
    uint32_t r = g.add(OpId::subtract, {f, {c, n}}, {y, s});
    uint32_t xr = g.add(OpId::dot, {f, {c, d}}, {r, xb}, Attrs::of(columns));
    return g.add(OpId::subtract, {f, {c, d}}, {xr, at});
  };
  uint32_t half_h = g.add(OpId::multiply, {f, {}}, {h, g.add(OpId::constant, {f, {}}, {}, constant_attrs(0.5))});
  uint32_t p1 = g.add(OpId::add, {f, {c, d}}, {p, g.add(OpId::multiply, {f, {c, d}}, {half_h, grad(q)})});
  uint32_t q1 = g.add(OpId::add, {f, {c, d}}, {q, g.add(OpId::multiply, {f, {c, d}}, {h, p1})});
  uint32_t p2 = g.add(OpId::add, {f, {c, d}}, {p1, g.add(OpId::multiply, {f, {c, d}}, {half_h, grad(q1)})});
  for (uint32_t v : {q1, p2, x, y, h}) g.output(v);
  return g;
}

void expect_chains(int64_t c, int64_t n, int64_t d, uint32_t trips, bool own_x = false) {
  auto dev = shared_device();
  if (!dev->has(kCapFloat64)) GTEST_SKIP() << "no f64";
  Graph body = leapfrog_chains(c, n, d, own_x);
  auto program = compile_loop_program(*dev, body, 5, trips, {true, true, own_x, false, false});
  EXPECT_EQ(program->stats().launches, 1u);
  std::mt19937 rng(19);
  auto inputs = leapfrog_inputs(*dev, n, d);
  inputs[0] = random_tensor(*dev, DType::F64, {c, d}, rng);
  inputs[1] = random_tensor(*dev, DType::F64, {c, d}, rng);
  if (own_x) inputs[2] = random_tensor(*dev, DType::F64, {c, n, d}, rng);
  auto outs = program->run(*dev, inputs);
  auto want = trips_eagerly(*dev, body, inputs, 5, trips);
  for (size_t j = 0; j < 2; ++j) expect_same_bits(*dev, want[j], outs[j]);
}

void expect_fit(DType f, int64_t c, int64_t n, int64_t d, uint32_t trips) {
  auto dev = shared_device();
  if (f == DType::F64 && !dev->has(kCapFloat64)) GTEST_SKIP() << "no f64";
  Graph body = fit_steps(f, c, n, d);
  auto program = compile_loop_program(*dev, body, 3, trips);
  EXPECT_EQ(program->stats().launches, 1u);
  std::mt19937 rng(23);
  Shape ws = c > 0 ? Shape{c, d} : Shape{d};
  std::vector<Tensor> inputs{random_tensor(*dev, f, ws, rng), random_tensor(*dev, f, {n, d}, rng),
                             random_tensor(*dev, f, {n}, rng)};
  auto outs = program->run(*dev, inputs);
  auto want = trips_eagerly(*dev, body, inputs, 3, trips);
  expect_same_bits(*dev, want[0], outs[0]);
}

}  // namespace

// Reductions in their eager kernels' order: the plans of CPU drivers (one invocation a row)
// and of GPUs (lanes a row, subgroup shuffles, columns apart), one chain and several.
TEST(LoopKernel, ReductionsFoldAndCombineAsTheirKernels) {
  {
    ScopedTuning no_blas{"host_blas", "0"};
    expect_fit(DType::F32, 0, 150, 4, 9);
    expect_fit(DType::F64, 3, 40, 5, 4);
  }
  GpuDotPaths gpu;
  expect_fit(DType::F32, 0, 150, 4, 9);
  expect_fit(DType::F64, 0, 120, 8, 3);
  expect_fit(DType::F32, 4, 64, 4, 5);
}

// A data-dependent loop: x = x * 1.001 + 0.5 while sum(x) < limit, its condition computed in
// the kernel each trip; runs of `trips` trips until one says the loop is done, against the ops
// run one by one with the condition read on the host.
TEST(LoopKernel, ConditionsEndTheLoopOnTheDevice) {
  auto dev = shared_device();
  Graph g;
  uint32_t x = g.input(DType::F32, {16}), n = g.input(DType::S32, {}), limit = g.input(DType::F32, {});
  uint32_t scaled = g.add(OpId::multiply, {DType::F32, {16}}, {x, g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(1.001))});
  g.output(g.add(OpId::add, {DType::F32, {16}}, {scaled, g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(0.5))}));
  g.output(g.add(OpId::add, {DType::S32, {}}, {n, g.add(OpId::constant, {DType::S32, {}}, {}, integer_attrs(1))}));
  g.output(limit);
  uint32_t total = g.add(OpId::sum, {DType::F32, {}}, {x}, Attrs::of(ReduceAttrs{}));
  g.output(g.add(OpId::less, {DType::U8, {}}, {total, limit}));
  std::vector<float> start(16);
  for (size_t i = 0; i < start.size(); ++i) start[i] = float(i) / 100;
  for (uint32_t per_run : {64u, 4096u}) {
    auto program = compile_loop_program(*dev, g, 3, per_run, {}, true);
    std::vector<Tensor> state{upload(*dev, DType::F32, {16}, start), upload(*dev, DType::S32, {}, std::vector<int32_t>{0}),
                              upload(*dev, DType::F32, {}, std::vector<float>{14000})};
    int runs = 0;
    for (;; ++runs) {
      auto outs = program->run(*dev, state);
      ASSERT_EQ(outs.size(), 4u);
      state = {outs[0], outs[1], outs[2]};
      if (download<uint8_t>(*dev, outs[3])[0] != 0) break;
      ASSERT_LT(runs, 100);
    }
    // The same loop op by op, the condition read on the host.
    std::vector<Tensor> eager{upload(*dev, DType::F32, {16}, start), upload(*dev, DType::S32, {}, std::vector<int32_t>{0}),
                              upload(*dev, DType::F32, {}, std::vector<float>{14000})};
    for (int trip = 0;; ++trip) {
      auto outs = run_eagerly(*dev, g, eager);
      if (download<uint8_t>(*dev, outs[3])[0] == 0) break;
      eager = {outs[0], outs[1], outs[2]};
      ASSERT_LT(trip, 100000);
    }
    expect_same_bits(*dev, eager[0], state[0]);
    expect_same_bits(*dev, eager[1], state[1]);
    int32_t trips = download<int32_t>(*dev, state[1])[0];
    EXPECT_GT(trips, 900);
    EXPECT_EQ(runs, int(trips / per_run));
  }
}

// Values no later op reads give their shared arrays to later values: a body of 1536-element
// values between sums, each 6 KiB, fits lavapipe's 32 KiB only so.
TEST(LoopKernel, ArraysOfDeadValuesAreReused) {
  auto dev = shared_device();
  const int64_t n = 1536;
  Graph g;
  uint32_t x = g.input(DType::F32, {n});
  uint32_t v = g.add(OpId::multiply, {DType::F32, {n}}, {x, g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(0.5))});
  for (int i = 0; i < 4; ++i) {
    uint32_t total = g.add(OpId::sum, {DType::F32, {}}, {v}, Attrs::of(ReduceAttrs{}));
    uint32_t scaled = g.add(OpId::multiply, {DType::F32, {}}, {total, g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(1e-3))});
    v = g.add(OpId::subtract, {DType::F32, {n}}, {v, scaled});
  }
  g.output(v);
  auto program = compile_loop_program(*dev, g, 1, 5);
  std::mt19937 rng(29);
  std::vector<Tensor> inputs{random_tensor(*dev, DType::F32, {n}, rng)};
  expect_same_bits(*dev, trips_eagerly(*dev, g, inputs, 1, 5)[0], program->run(*dev, inputs)[0]);
}

// Vectorized chains, one workgroup each: the bits of the batched ops run one by one.
TEST(LoopKernel, ChainsRunInAWorkgroupEach) {
  {
    ScopedTuning no_blas{"host_blas", "0"};
    expect_chains(5, 40, 8, 9);
  }
  GpuDotPaths gpu;
  expect_chains(128, 200, 8, 4);
  expect_chains(3, 300, 5, 2);
  // Each chain its own x, staged with its rows padded (an even row length), odd and even.
  expect_chains(4, 50, 6, 3, true);
  expect_chains(3, 37, 5, 3, true);
}

TEST(LoopKernel, LeapfrogTrajectoryHasTheBitsOfItsOpsOneByOne) {
  ScopedTuning no_blas{"host_blas", "0"};
  expect_leapfrog_trips(200, 8, 32);
}

TEST(LoopKernel, LeapfrogOnTheGpusPlansSumsOverLanesAsTheirKernels) {
  GpuDotPaths gpu;  // products split over lanes and combined pairwise
  expect_leapfrog_trips(200, 8, 32);
  // Sizes across the workgroup's 256 invocations, and one trip.
  expect_leapfrog_trips(300, 5, 3);
  expect_leapfrog_trips(7, 64, 1);
}

// A counter, a state that is a view of another (a swap through a reshape), an integer branch.
TEST(LoopKernel, CountersSwapsAndViewsInTheState) {
  auto dev = shared_device();
  Graph g;
  uint32_t i = g.input(DType::S32, {}), a = g.input(DType::F32, {2, 3}), b = g.input(DType::F32, {6});
  uint32_t one = g.add(OpId::constant, {DType::S32, {}}, {}, integer_attrs(1));
  uint32_t next_i = g.add(OpId::add, {DType::S32, {}}, {i, one});
  uint32_t scaled = g.add(OpId::multiply, {DType::F32, {2, 3}}, {a, g.add(OpId::as_type, {DType::F32, {}}, {next_i})});
  uint32_t flat = g.add(OpId::reshape, {DType::F32, {6}}, {scaled}, Attrs::of(ShapeAttrs{}));
  uint32_t back = g.add(OpId::reshape, {DType::F32, {2, 3}}, {b}, Attrs::of(ShapeAttrs{}));
  g.output(next_i);
  g.output(back);  // a <- b, b <- a * (i + 1): a swap through views
  g.output(flat);
  auto program = compile_loop_program(*dev, g, 3, 5);
  std::mt19937 rng(3);
  std::vector<Tensor> inputs{upload(*dev, DType::S32, {}, std::vector<int32_t>{7}),
                             random_tensor(*dev, DType::F32, {2, 3}, rng), random_tensor(*dev, DType::F32, {6}, rng)};
  auto outs = program->run(*dev, inputs);
  auto want = trips_eagerly(*dev, g, inputs, 3, 5);
  for (size_t j = 0; j < 3; ++j) expect_same_bits(*dev, want[j], outs[j]);
  EXPECT_EQ(download<int32_t>(*dev, outs[0])[0], 12);
}

// Inputs no trip changes sit in shared memory for every trip: a view of one (read early in a
// trip) does not give its array to a later value, whatever the trip reads of it after.
TEST(LoopKernel, InputsReadThroughViewsKeepTheirSharedArrays) {
  auto dev = shared_device();
  Graph g;
  uint32_t q = g.input(DType::F32, {8}), x = g.input(DType::F32, {8, 4}), w = g.input(DType::F32, {4});
  uint32_t flat = g.add(OpId::reshape, {DType::F32, {32}}, {x}, Attrs::of(ShapeAttrs{}));
  ReduceAttrs all;
  all.axes = {0};
  uint32_t total = g.add(OpId::sum, {DType::F32, {}}, {flat}, Attrs::of(all));
  uint32_t scaled = g.add(OpId::multiply, {DType::F32, {8}}, {q, total});  // may take a freed array of 8+
  DotAttrs d;
  d.left_contract = {1};
  d.right_contract = {0};
  uint32_t xw = g.add(OpId::dot, {DType::F32, {8}}, {x, w}, Attrs::of(d));  // x again, after the view's reader
  g.output(g.add(OpId::subtract, {DType::F32, {8}}, {scaled, xw}));
  auto program = compile_loop_program(*dev, g, 1, 3);
  std::mt19937 rng(41);
  std::vector<Tensor> inputs{random_tensor(*dev, DType::F32, {8}, rng), random_tensor(*dev, DType::F32, {8, 4}, rng),
                             random_tensor(*dev, DType::F32, {4}, rng)};
  auto outs = program->run(*dev, inputs);
  expect_same_bits(*dev, trips_eagerly(*dev, g, inputs, 1, 3)[0], outs[0]);
}

TEST(LoopKernel, BodiesItDoesNotComputeAreRefusedWithTheReason) {
  auto dev = shared_device();
  auto refused = [&](const Graph& g, size_t state, const std::string& part) {
    try {
      compile_loop_program(*dev, g, state, 4);
      ADD_FAILURE() << "compiled";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  {
    Graph g;  // an index
    uint32_t x = g.input(DType::F32, {16});
    uint32_t s = g.add(OpId::argmax, {DType::S32, {}}, {x}, Attrs::of(ArgReduceAttrs{}));
    g.output(g.add(OpId::add, {DType::F32, {16}}, {x, g.add(OpId::as_type, {DType::F32, {}}, {s})}));
    refused(g, 1, "argmax");
  }
  {
    Graph g;  // f16
    uint32_t x = g.input(DType::F16, {4});
    g.output(g.add(OpId::add, {DType::F16, {4}}, {x, x}));
    refused(g, 1, "f16");
  }
  {
    Graph g;  // over the shared memory (flattened: the rows are no chains)
    uint32_t x = g.input(DType::F64, {256, 256});
    uint32_t flat = g.add(OpId::reshape, {DType::F64, {1 << 16}}, {x}, Attrs::of(ShapeAttrs{}));
    uint32_t twice = g.add(OpId::add, {DType::F64, {1 << 16}}, {flat, flat});
    g.output(g.add(OpId::reshape, {DType::F64, {256, 256}}, {twice}, Attrs::of(ShapeAttrs{})));
    refused(g, 1, "shared memory");
  }
  {
    Graph g;  // a matrix product
    uint32_t x = g.input(DType::F32, {8, 8});
    g.output(g.add(OpId::dot, {DType::F32, {8, 8}}, {x, x}, Attrs::of(contracting(1, 0))));
    refused(g, 1, "matrix product");
  }
  {
    Graph g;  // outputs that are not the state
    uint32_t x = g.input(DType::F32, {4});
    g.output(g.add(OpId::add, {DType::F32, {4}}, {x, x}));
    g.output(x);
    EXPECT_THROW(compile_loop_program(*dev, g, 1, 4), Error);
  }
}
