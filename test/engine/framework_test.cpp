// The op framework: the op table, checks with reasons, typed kernel variants compiled outside
// the cache's lock, parameter blocks over 128 bytes, and graphs that record once and re-run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <thread>

#include "device/device_impl.hpp"
#include "param_block_probe.h"
#include "exec/launch.hpp"
#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "nxv/ops.hpp"
#include "op_case_util.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

TEST(OpTable, EveryRowIsFoundByNameAndHasItsFamily) {
  std::set<std::string_view> names;
  for (const auto& row : op_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " appears twice";
    auto id = find_op(row.name);
    ASSERT_TRUE(id) << row.name;
    EXPECT_EQ(*id, row.id);
    EXPECT_EQ(op_info(row.id).name, row.name);
    EXPECT_FALSE(row.family_name.empty());
  }
  EXPECT_FALSE(find_op("no_such_op"));
  EXPECT_EQ(native_op_names().size(), op_table().size());
}

TEST(OpTable, ChecksSayWhyNotAndSeeShapes) {
  auto dev = shared_device();
  std::vector<TensorSpec> f32x2{contiguous_spec(DType::F32, {2, 3}), contiguous_spec(DType::F32, {3})};
  EXPECT_TRUE(check_op(*dev, OpId::add, {DType::F32, {2, 3}}, f32x2));
  Support s = check_op(*dev, OpId::quotient, {DType::F32, {2, 3}}, f32x2);
  EXPECT_FALSE(s);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported);
  EXPECT_NE(s.reason.find("quotient"), std::string::npos) << s.reason;
  std::vector<TensorSpec> bad{contiguous_spec(DType::F32, {2, 3}), contiguous_spec(DType::F32, {4})};
  s = check_op(*dev, OpId::add, {DType::F32, {2, 3}}, bad);
  EXPECT_FALSE(s);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  EXPECT_NE(s.reason.find("broadcast"), std::string::npos) << s.reason;
  s = check_op(*dev, OpId::add, {DType::F32, {2, 3}}, std::vector<TensorSpec>{f32x2[0]});
  EXPECT_FALSE(s);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);  // arity from the table
}

namespace {

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(int32_t(x >> 8) % 20000) / 1000.f - 10.f;
  }
  return v;
}

KernelKey small_key(uint32_t tag) {
  // The parameter-block probe with a distinct unused define: a distinct, quick compile.
  return KernelKey{"param_block_probe", {{"NXV_TEST_TAG", std::to_string(tag)}}, 64};
}

// A probe variant whose source takes `delay_ms` to build and counts how often it is built.
std::atomic<int> g_probe_sources{0};
struct ProbeVariant {
  static constexpr const char* kTemplate = "param_block_probe";
  uint32_t tag = 0;
  uint32_t delay_ms = 0;
  std::function<void()>* on_source = nullptr;  // not a field: a test hook
  auto fields() const { return std::tie(tag, delay_ms); }
  KernelKey source() const {
    ++g_probe_sources;
    if (on_source) (*on_source)();
    if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    return small_key(tag);
  }
};

}  // namespace

TEST(KernelVariants, CompilesRunOutsideTheLockAndACachedKernelNeverWaits) {
  std::shared_ptr<Device> dev;
  {
    ScopedSettings no_disk_cache([](Settings& s) { s.cache_dir.clear(); });
    dev = Device::open();
  }
  auto& cache = dev->impl().kernels;
  auto stamp = uint32_t(std::chrono::steady_clock::now().time_since_epoch().count() & 0xffffff);
  ProbeVariant built{.tag = stamp};
  cache.get(built);

  // A slow "compile": the source of this variant takes a second and a half to produce (it runs
  // where the compile runs, outside the cache's lock).
  std::atomic<bool> slow_started{false}, slow_done{false}, other_done{false};
  std::function<void()> mark_started = [&] { slow_started = true; };
  std::thread slow([&] {
    cache.get(ProbeVariant{.tag = stamp + 1, .delay_ms = 1500, .on_source = &mark_started});
    slow_done = true;
  });
  while (!slow_started) std::this_thread::yield();
  // A cached kernel is found at once, without building its source again.
  int sources_before = g_probe_sources.load();
  auto t0 = std::chrono::steady_clock::now();
  cache.get(built);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(g_probe_sources.load(), sources_before) << "rebuilt a cached kernel";
  EXPECT_LT(waited, std::chrono::milliseconds(200));
  EXPECT_FALSE(slow_done);
  // Another new variant compiles meanwhile, in parallel with the slow one.
  std::thread other([&] {
    cache.get(ProbeVariant{.tag = stamp + 2});
    other_done = true;
  });
  other.join();
  EXPECT_TRUE(other_done);
  EXPECT_FALSE(slow_done) << "the second compile waited for the first";
  slow.join();
  EXPECT_TRUE(slow_done);
  EXPECT_EQ(cache.stats().compiled, 3u);
  // Several threads asking for one new variant build it once.
  std::vector<std::thread> threads;
  int sources_then = g_probe_sources.load();
  for (int i = 0; i < 6; ++i) threads.emplace_back([&] { cache.get(ProbeVariant{.tag = stamp + 3}); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(g_probe_sources.load() - sources_then, 1);
  EXPECT_EQ(cache.stats().compiled, 4u);
}

TEST(Launches, ParameterBlocksLargerThanPushConstantsReachTheKernel) {
  static_assert(sizeof(ParamBlockProbeParams) > kPushConstantBytes);
  auto dev = shared_device();
  auto& impl = dev->impl();
  const Kernel& kernel = impl.kernels.get(small_key(0));
  Tensor out = empty(*dev, DType::U32, {NXV_PROBE_VALUES});
  LaunchBuilder builder;
  uint32_t slot = builder.bind(out.buffer);
  ParamBlockProbeParams params{};
  params.count = NXV_PROBE_VALUES;
  for (uint32_t i = 0; i < NXV_PROBE_VALUES; ++i) params.values[i] = 1000 + 7 * i;
  Launch& l = builder.launch(kernel, {1, 1, 1}, ParamBlockProbePush{}, {});
  builder.params(l, params, offsetof(ParamBlockProbePush, params_addr),
                 {{offsetof(ParamBlockProbeParams, out_addr), BufferRef{slot, 0}}});
  builder.use(l, slot, Access::Write);
  auto buffers = builder.buffers();
  Executable exec = std::move(builder).finish();
  for (int round = 0; round < 3; ++round) {  // re-runs: a new block each time
    exec.run(impl.stream, impl.kernels.layout(), buffers);
    auto got = download<uint32_t>(*dev, out);
    for (uint32_t i = 0; i < NXV_PROBE_VALUES; ++i) ASSERT_EQ(got[i], 2 * (1000 + 7 * i)) << i;
  }
}

TEST(Graphs, RecordOnceAndReRunWithNewBuffersAsEagerOpsDo) {
  auto dev = shared_device();
  const int64_t n = 1000;
  Graph g;
  uint32_t a = g.input(DType::F32, {n});
  uint32_t b = g.input(DType::S32, {n});
  uint32_t sum = g.add(OpId::add, {DType::F32, {n}}, {a, b});
  uint32_t e = g.add(OpId::exp, {DType::F32, {n}}, {sum});
  uint32_t c = g.add(OpId::less, {DType::U8, {n}}, {e, a});
  g.output(e);
  g.output(c);
  auto make = [&](uint32_t seed) {
    auto x = random_floats(n, seed);
    std::vector<int32_t> y(n);
    for (int64_t i = 0; i < n; ++i) y[i] = int32_t((i * 7 + seed) % 11) - 5;
    return std::pair{upload(*dev, DType::F32, {n}, x), upload(*dev, DType::S32, {n}, y)};
  };
  auto [x0, y0] = make(1);
  GraphExecutable exec = compile_graph(*dev, g, std::vector<Tensor>{x0, y0});
  for (uint32_t seed : {2u, 3u}) {
    auto [x, y] = make(seed);
    auto outs = exec.run(*dev, std::vector<Tensor>{x, y});
    Tensor sum_e = run_op(*dev, OpId::add, OutSpec{DType::F32, {n}}, std::vector<Tensor>{x, y});
    Tensor eager_e = run_op(*dev, OpId::exp, OutSpec{DType::F32, {n}}, std::vector<Tensor>{sum_e});
    Tensor eager_c = run_op(*dev, OpId::less, OutSpec{DType::U8, {n}}, std::vector<Tensor>{eager_e, x});
    EXPECT_EQ(download<uint32_t>(*dev, outs[0]), download<uint32_t>(*dev, eager_e));
    EXPECT_EQ(download<uint8_t>(*dev, outs[1]), download<uint8_t>(*dev, eager_c));
  }
  // Inputs laid out otherwise than at compile time are refused.
  Tensor strided = slice_view(upload(*dev, DType::F32, {2 * n}, random_floats(2 * n, 4)), {0}, {n}, {2});
  EXPECT_THROW(exec.run(*dev, std::vector<Tensor>{strided, y0}), Error);
}

// A program compiles from input specs alone (Nx.Defn.compile with templates) and runs with
// inputs in any layout: views are copied row-major first. Results are the eager bits; the
// dot's bias add and ReLU are fused into it; an output may be an input.
TEST(Programs, CompileFromSpecsAndRunViewsAndInputsAsResults) {
  auto dev = shared_device();
  const int64_t m = 37, k = 29, n = 19;  // not multiples of any tile
  Graph g;
  uint32_t x = g.input(DType::F32, {m, k});
  uint32_t w = g.input(DType::F32, {k, n});
  uint32_t b = g.input(DType::F32, {n});
  uint32_t zero = g.input(DType::F32, {});
  DotAttrs d;
  d.left_contract = {1};
  d.right_contract = {0};
  Attrs dot_attrs = Attrs::of(d);
  uint32_t prod = g.add(OpId::dot, {DType::F32, {m, n}}, {x, w}, dot_attrs);
  uint32_t biased = g.add(OpId::add, {DType::F32, {m, n}}, {prod, b});
  uint32_t relu = g.add(OpId::max, {DType::F32, {m, n}}, {biased, zero});
  g.output(relu);
  g.output(b);
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().nodes, 3u);
  EXPECT_EQ(program->stats().fused, 2u);
  EXPECT_EQ(program->input_count(), 4u);

  // x arrives transposed (a strided view), b broadcast from a scalar-like row.
  Tensor xt = upload(*dev, DType::F32, {k, m}, random_floats(k * m, 5));
  Tensor xv = transpose_view(xt, {1, 0});
  Tensor wv = upload(*dev, DType::F32, {k, n}, random_floats(k * n, 6));
  Tensor bv = upload(*dev, DType::F32, {n}, random_floats(n, 7));
  Tensor zv = upload(*dev, DType::F32, {}, std::vector<float>{0.0f});
  // Views are copied by kernels recorded like the program's: a run need not block for them.
  EXPECT_TRUE(program->runs_without_blocking());
  auto outs = program->run(*dev, {xv, wv, bv, zv});  // compiles the copy kernels the views need
  auto again = program->run_if_compiled(*dev, {xv, wv, bv, zv});
  ASSERT_TRUE(again.has_value()) << "every kernel is compiled now";
  EXPECT_EQ(download<uint32_t>(*dev, again->at(0)), download<uint32_t>(*dev, outs[0]));
  ASSERT_EQ(outs.size(), 2u);
  Tensor eager = run_op(*dev, OpId::dot, {DType::F32, {m, n}}, {contiguous(*dev, xv), wv}, dot_attrs);
  eager = run_op(*dev, OpId::add, {DType::F32, {m, n}}, {eager, bv});
  eager = run_op(*dev, OpId::max, {DType::F32, {m, n}}, {eager, zv});
  EXPECT_EQ(download<uint32_t>(*dev, outs[0]), download<uint32_t>(*dev, eager));
  EXPECT_EQ(download<uint32_t>(*dev, outs[1]), download<uint32_t>(*dev, bv));
  // Another type or shape than compiled is refused, naming the input.
  EXPECT_THROW(program->run(*dev, {wv, wv, bv, zv}), Error);
  EXPECT_THROW(program->run(*dev, {xv, wv, bv}), Error);
}

// A result a program returns as a view into a packed buffer (a region's results) comes back as
// an input at its offset: where the offset keeps the alignment the kernels were compiled for,
// the program reads it in place (no copy launched), else it is copied first; the eager bits
// either way.
TEST(Programs, InputsAtAlignedOffsetsAreReadInPlace) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // the GPUs' kernels: on a CPU driver a host BLAS step would take no offsets
  const int64_t m = 37, k = 29, n = 19;
  Graph g;
  uint32_t x = g.input(DType::F32, {m, k});
  uint32_t w = g.input(DType::F32, {k, n});
  uint32_t b = g.input(DType::F32, {n});
  DotAttrs d;
  d.left_contract = {1};
  d.right_contract = {0};
  Attrs dot_attrs = Attrs::of(d);
  g.output(g.add(OpId::add, {DType::F32, {m, n}}, {g.add(OpId::dot, {DType::F32, {m, n}}, {x, w}, dot_attrs), b}));
  auto program = compile_program(*dev, g);
  // Row-major views `at` elements into buffers of more.
  auto view_at = [&](const Shape& shape, int64_t at, uint64_t seed) {
    Tensor t = upload(*dev, DType::F32, {shape_size(shape) + at + 7}, random_floats(size_t(shape_size(shape) + at + 7), seed));
    t.shape = shape;
    t.strides = row_major_strides(shape);
    t.offset = at;
    return t;
  };
  Tensor wv = upload(*dev, DType::F32, {k, n}, random_floats(k * n, 9));
  for (int64_t at : {16, 48, 3}) {  // 64 and 192 bytes in; 12 bytes: copied
    Tensor xv = view_at({m, k}, at, 10 + uint64_t(at)), bv = view_at({n}, at, 20 + uint64_t(at));
    program->run(*dev, {xv, wv, bv});  // compiles any copy kernel
    const uint64_t before = dev->impl().stream.stats().commands;
    auto outs = program->run(*dev, {xv, wv, bv});
    const uint64_t commands = dev->impl().stream.stats().commands - before;
    if (at % 16 == 0) EXPECT_EQ(commands, program->stats().launches) << "offset " << at;
    else EXPECT_GT(commands, program->stats().launches) << "offset " << at;
    Tensor eager = run_op(*dev, OpId::dot, {DType::F32, {m, n}}, {contiguous(*dev, xv), wv}, dot_attrs);
    eager = run_op(*dev, OpId::add, {DType::F32, {m, n}}, {eager, contiguous(*dev, bv)});
    EXPECT_EQ(download<uint32_t>(*dev, outs.at(0)), download<uint32_t>(*dev, eager)) << "offset " << at;
  }
}

// Runs of elementwise nodes are one kernel each (graph/chain_fusion.hpp) with the bits of the
// ops run one by one; a value two nodes read is computed again in each where that is a few
// steps (fuse_shared_chains), and a graph output is not fused away.
TEST(Programs, ElementwiseRunsFuseIntoOneKernelWithTheEagerBits) {
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  auto dev = shared_device();
  const int64_t n = 1000;
  Graph g;
  uint32_t x = g.input(DType::F32, {n});
  uint32_t y = g.input(DType::F32, {n});
  uint32_t s = g.input(DType::F32, {});  // broadcast
  uint32_t a = g.add(OpId::add, {DType::F32, {n}}, {x, y});
  uint32_t b = g.add(OpId::exp, {DType::F32, {n}}, {a});
  uint32_t c = g.add(OpId::multiply, {DType::F32, {n}}, {b, s});
  uint32_t d = g.add(OpId::subtract, {DType::F32, {n}}, {x, c});  // x - s * exp(x + y): one kernel
  uint32_t e = g.add(OpId::sin, {DType::F32, {n}}, {d});
  uint32_t f = g.add(OpId::tanh, {DType::F32, {n}}, {d});  // d has two readers: each computes it
  g.output(e);
  g.output(f);
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().fused, 4u);
  EXPECT_EQ(program->stats().launches, 2u);
  Tensor xv = upload(*dev, DType::F32, {n}, random_floats(n, 11));
  Tensor yv = upload(*dev, DType::F32, {n}, random_floats(n, 12));
  Tensor sv = upload(*dev, DType::F32, {}, std::vector<float>{0.37f});
  auto outs = program->run(*dev, {xv, yv, sv});
  auto op = [&](OpId id, std::vector<Tensor> in) { return run_op(*dev, id, OutSpec{DType::F32, {n}}, in); };
  Tensor ed = op(OpId::subtract, {xv, op(OpId::multiply, {op(OpId::exp, {op(OpId::add, {xv, yv})}), sv})});
  EXPECT_EQ(download<uint32_t>(*dev, outs[0]), download<uint32_t>(*dev, op(OpId::sin, {ed})));
  EXPECT_EQ(download<uint32_t>(*dev, outs[1]), download<uint32_t>(*dev, op(OpId::tanh, {ed})));
}

// The NIF records ops on a normal BEAM scheduler through run_op_if_compiled: it must decline,
// recording nothing, while a kernel the op needs is not compiled, and run once it is.
TEST(Eager, RunIfCompiledDeclinesUntilItsKernelIsBuilt) {
  ScopedTuning kernels("ew.host", "0");  // its small adds record kernels, not host arithmetic
  std::shared_ptr<Device> dev;
  try {
    dev = Device::open();  // a fresh kernel cache
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no Vulkan device: " << e.what();
  }
  std::vector<float> v{1, 2, 3, 4};
  Tensor a = from_host(*dev, DType::F32, {4}, v.data(), 16);
  OutSpec out{DType::F32, {4}};
  dev->synchronize();
  uint64_t before = dev->impl().stream.stats().commands;
  EXPECT_FALSE(run_op_if_compiled(*dev, OpId::multiply, out, {a, a}).has_value());
  dev->synchronize();
  EXPECT_EQ(dev->impl().stream.stats().commands, before);
  run_op(*dev, OpId::multiply, out, {a, a});
  auto again = run_op_if_compiled(*dev, OpId::multiply, out, {a, a});
  ASSERT_TRUE(again.has_value());
  std::vector<float> got(4);
  to_host(*dev, *again, got.data(), 16);
  EXPECT_EQ(got, (std::vector<float>{1, 4, 9, 16}));
}

TEST(Eager, DotDeclinesThenRuns) {
  std::shared_ptr<Device> dev;
  try {
    dev = Device::open();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no Vulkan device: " << e.what();
  }
  std::vector<float> x(64), w(32);
  for (int i = 0; i < 64; ++i) x[i] = float(i);
  for (int i = 0; i < 32; ++i) w[i] = float(i);
  Tensor a = from_host(*dev, DType::F32, {64, 1}, x.data(), 256), b = from_host(*dev, DType::F32, {1, 32}, w.data(), 128);
  DotAttrs d;
  d.left_contract = {1};
  d.right_contract = {0};
  Attrs attrs = Attrs::of(d);
  OutSpec out{DType::F32, {64, 32}};
  EXPECT_FALSE(run_op_if_compiled(*dev, OpId::dot, out, {a, b}, attrs).has_value());
  Tensor r = run_op(*dev, OpId::dot, out, {a, b}, attrs);
  std::vector<float> got(64 * 32);
  to_host(*dev, r, got.data(), got.size() * 4);
  EXPECT_EQ(got[2 * 32 + 1], x[2] * w[1]);
  // Where the product's kernels are built but its run blocks (CPU drivers: a host BLAS step
  // that waits for the GPU), the caller that may not block gets it lowered, nothing recorded,
  // and runs it where it may: the same values.
  ScopedTuning blas("host_blas", "1");  // at this size too
  dev->synchronize();
  uint64_t commands = dev->stream_stats().commands;
  std::shared_ptr<PreparedOp> prepared;
  auto ran = run_op_if_compiled(*dev, OpId::dot, out, {a, b}, attrs, &prepared);
  if (!dev->impl().core->profile().cpu_driver) {
    EXPECT_TRUE(ran.has_value() && !prepared);  // GPUs: kernels only, recorded at once
    return;
  }
  ASSERT_TRUE(prepared);
  EXPECT_EQ(dev->stream_stats().commands, commands);
  Tensor later = run_prepared(*dev, *prepared);
  std::vector<float> again(64 * 32);
  to_host(*dev, later, again.data(), again.size() * 4);
  EXPECT_EQ(again, got);
}
