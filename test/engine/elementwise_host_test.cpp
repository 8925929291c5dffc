// Elementwise arithmetic on CPU drivers through the host (ops/elementwise/elementwise_host.hpp):
// the same bits as the kernels, subnormals, infinities and NaN included, for single ops, fused
// chains with constants and broadcast operands, on f32 and f64; taken as a host step.
#include <cstring>

#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Half the values arbitrary bit patterns (NaN, infinities and subnormals among them), half
// ordinary numbers and tiny ones whose products and differences are subnormal.
Tensor raw_tensor(Device& d, DType t, int64_t n, std::mt19937& rng) {
  size_t size = dtype_size(t);
  std::vector<std::byte> bytes(size_t(n) * size);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  for (int64_t i = 0; i < n; ++i) {
    std::byte* p = bytes.data() + size_t(i) * size;
    if (i % 2) {
      uint64_t v = uint64_t(rng()) << 32 | rng();
      std::memcpy(p, &v, size);
    } else {
      double tiny = t == DType::F32 ? 1e-38 : 1e-307;
      store_real(t, i % 4 == 0 ? real(rng) : real(rng) * tiny, p);
    }
  }
  return from_host(d, t, {n}, bytes.data(), bytes.size());
}

bool on_cpu_driver(Device& d) { return d.impl().core->profile().cpu_driver; }

// The op through the kernels and through the host: the same bits.
void expect_host_has_kernel_bits(Device& d, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs) {
  Tensor kernel, host;
  {
    ScopedTuning off("ew.host", "0");
    kernel = run_op(d, op, out, inputs, {});
  }
  {
    ScopedTuning on("ew.host", "1");
    host = run_op(d, op, out, inputs, {});
  }
  expect_same_bits(d, kernel, host);
}

}  // namespace

TEST(ElementwiseHost, ArithmeticHasTheKernelsBits) {
  auto dev = shared_device();
  if (!on_cpu_driver(*dev)) GTEST_SKIP() << "the host path is for CPU drivers";
  std::mt19937 rng(sample_seed());
  for (DType t : {DType::F32, DType::F64}) {
    const int64_t n = 70001;  // not a multiple of the host's blocks or the kernels' groups
    Tensor x = raw_tensor(*dev, t, n, rng), y = raw_tensor(*dev, t, n, rng);
    Tensor one = scalar(*dev, t, -0.75);
    for (OpId op : {OpId::add, OpId::subtract, OpId::multiply, OpId::divide, OpId::negate}) {
      SCOPED_TRACE(std::string(op_info(op).name) + (t == DType::F32 ? " f32" : " f64"));
      std::vector<Tensor> in = op == OpId::negate ? std::vector<Tensor>{x} : std::vector<Tensor>{x, y};
      std::vector<Tensor> broadcast = op == OpId::negate ? std::vector<Tensor>{one} : std::vector<Tensor>{one, y};
      for (const auto& inputs : {in, broadcast}) expect_host_has_kernel_bits(*dev, op, {t, {n}}, inputs);
    }
  }
}

TEST(ElementwiseHost, RowsPlusABiasHaveTheKernelsBits) {
  auto dev = shared_device();
  if (!on_cpu_driver(*dev)) GTEST_SKIP() << "the host path is for CPU drivers";
  std::mt19937 rng(sample_seed());
  for (DType t : {DType::F32, DType::F64}) {
    SCOPED_TRACE(t == DType::F32 ? "f32" : "f64");
    // A bias whose period (1000 and 700 elements) straddles the host's blocks of 512.
    for (Shape rows : {Shape{70, 1000}, Shape{3, 110, 700}}) {
      Tensor x = raw_tensor(*dev, t, shape_size(rows), rng), b = raw_tensor(*dev, t, rows.back(), rng);
      x.shape = rows;
      x.strides = row_major_strides(rows);
      for (OpId op : {OpId::add, OpId::subtract})
        for (bool bias_first : {false, true})
          expect_host_has_kernel_bits(*dev, op, {t, rows}, bias_first ? std::vector<Tensor>{b, x} : std::vector<Tensor>{x, b});
    }
  }
}

TEST(ElementwiseHost, ChainsWithConstantsHaveTheKernelsBitsAsAHostStep) {
  auto dev = shared_device();
  if (!on_cpu_driver(*dev)) GTEST_SKIP() << "the host path is for CPU drivers";
  std::mt19937 rng(sample_seed());
  for (DType t : {DType::F32, DType::F64}) {
    SCOPED_TRACE(t == DType::F32 ? "f32" : "f64");
    const int64_t n = 1 << 17;
    // SGD's update: w - 0.01 * g, then divided by a broadcast scalar and negated.
    ElementwiseChain chain;
    chain.constants.push_back({t, AttrNumber{.kind = AttrNumber::Kind::Float, .re = 0.01}});
    chain.steps.push_back(step(OpId::multiply, t, {{ChainOperand::From::Constant, 0}, in(1)}));
    chain.steps.push_back(step(OpId::subtract, t, {in(0), st(0)}));
    chain.steps.push_back(step(OpId::divide, t, {st(1), in(2)}));
    chain.steps.push_back(step(OpId::negate, t, {st(2)}));
    Graph g;
    uint32_t w = g.input(t, {n}), grad = g.input(t, {n}), s = g.input(t, {});
    g.output(g.add(OpId::elementwise_chain, {t, {n}}, {w, grad, s}, Attrs::of(chain)));
    Tensor tw = raw_tensor(*dev, t, n, rng), tg = raw_tensor(*dev, t, n, rng), ts = scalar(*dev, t, 3.0);
    Tensor kernel, host;
    {
      ScopedTuning off("ew.host", "0");
      auto p = compile_program(*dev, g);
      EXPECT_TRUE(p->runs_without_blocking());
      kernel = p->run(*dev, {tw, tg, ts})[0];
    }
    {
      ScopedTuning on("ew.host", "1");
      auto p = compile_program(*dev, g);
      EXPECT_FALSE(p->runs_without_blocking()) << "a host step";
      host = p->run(*dev, {tw, tg, ts})[0];
    }
    expect_same_bits(*dev, kernel, host);
  }
}

TEST(ElementwiseHost, OtherOpsTypesAndLayoutsStayOnTheDevice) {
  auto dev = shared_device();
  std::mt19937 rng(3);
  ScopedTuning on("ew.host", "1");
  // exp is not exactly rounded; integer quotients keep Nx's rules on the device; a transposed
  // operand is not dense.
  Graph g;
  uint32_t x = g.input(DType::F32, {300, 300});
  uint32_t i = g.input(DType::S32, {1000});
  g.output(g.add(OpId::exp, {DType::F32, {300, 300}}, {x}));
  g.output(g.add(OpId::quotient, {DType::S32, {1000}}, {i, i}));
  auto p = compile_program(*dev, g);
  Tensor tx = random_tensor(*dev, DType::F32, {300, 300}, rng), ti = random_tensor(*dev, DType::S32, {1000}, rng);
  EXPECT_TRUE(p->runs_without_blocking());
}

// An eager op on an idle stream (nothing recorded or unfinished) runs on the host at once: no
// command, no submission, and allowed where the caller may not block (run_op_if_compiled);
// with work recorded before it, or ew.host=0, the op records its kernel. The same bits either way.
TEST(ElementwiseHost, SmallEagerOpsOnAnIdleStreamRunAtOnce) {
  auto dev = shared_device();
  if (!on_cpu_driver(*dev)) GTEST_SKIP() << "the host path is for CPU drivers";
  std::mt19937 rng(sample_seed() + 40);
  for (DType t : {DType::F32, DType::F64}) {
    Tensor x = raw_tensor(*dev, t, 33, rng), y = raw_tensor(*dev, t, 33, rng);
    Tensor half = scalar(*dev, t, 0.5);
    for (OpId op : {OpId::add, OpId::subtract, OpId::multiply, OpId::divide, OpId::negate}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::string(op_info(op).name));
      std::vector<Tensor> in = op == OpId::negate ? std::vector<Tensor>{x} : std::vector<Tensor>{x, y};
      Tensor kernel;
      {
        ScopedTuning off("ew.host", "0");
        kernel = run_op(*dev, op, {t, {33}}, in, {});
      }
      dev->synchronize();
      StreamStatistics before = dev->stream_stats();
      auto host = run_op_if_compiled(*dev, op, {t, {33}}, in, {});
      ASSERT_TRUE(host.has_value());
      StreamStatistics after = dev->stream_stats();
      EXPECT_EQ(after.commands, before.commands);
      EXPECT_EQ(after.submits, before.submits);
      expect_same_bits(*dev, kernel, *host);
    }
    // Signed zeros: negate(0.0) is -0.0, and -0.0 + 0.0 is 0.0.
    for (double z : {0.0, -0.0}) {
      Tensor zero = scalar(*dev, t, z);
      for (OpId op : {OpId::negate, OpId::add}) {
        std::vector<Tensor> in = op == OpId::negate ? std::vector<Tensor>{zero} : std::vector<Tensor>{zero, scalar(*dev, t, -z)};
        Tensor kernel;
        {
          ScopedTuning off("ew.host", "0");
          kernel = run_op(*dev, op, {t, {}}, in, {});
        }
        dev->synchronize();
        expect_same_bits(*dev, kernel, run_op(*dev, op, {t, {}}, in, {}));
      }
    }
    // A scalar broadcast over the other operand.
    dev->synchronize();
    uint64_t commands = dev->stream_stats().commands;
    Tensor scaled = run_op(*dev, OpId::multiply, {t, {33}}, {x, half}, {});
    EXPECT_EQ(dev->stream_stats().commands, commands);
    ScopedTuning off("ew.host", "0");
    expect_same_bits(*dev, run_op(*dev, OpId::multiply, {t, {33}}, {x, half}, {}), scaled);
  }
  // An f32 scalar into an f64 op (Nx.multiply(f64_tensor, 0.1)): widened exactly, as the kernel does.
  {
    Tensor x = raw_tensor(*dev, DType::F64, 33, rng), tenth = scalar(*dev, DType::F32, 0.1);
    Tensor kernel;
    {
      ScopedTuning off("ew.host", "0");
      kernel = run_op(*dev, OpId::multiply, {DType::F64, {33}}, {x, tenth}, {});
    }
    dev->synchronize();
    uint64_t commands = dev->stream_stats().commands;
    Tensor host = run_op(*dev, OpId::multiply, {DType::F64, {33}}, {x, tenth}, {});
    EXPECT_EQ(dev->stream_stats().commands, commands);
    expect_same_bits(*dev, kernel, host);
  }
  // Work recorded and not yet finished: the op records its kernel behind it. (A device whose
  // batches wait for a later op or wait: otherwise a slow caller, a sanitizer build, may find
  // the exp submitted and finished before the add comes.)
  std::shared_ptr<Device> held;
  {
    ScopedSettings defer([](Settings& s) { s.submit_defer_us = 10'000'000; });
    held = Device::open();
  }
  Tensor x = raw_tensor(*held, DType::F32, 33, rng);
  held->synchronize();
  Tensor e = run_op(*held, OpId::exp, {DType::F32, {33}}, {x}, {});
  uint64_t commands = held->stream_stats().commands;
  Tensor sum = run_op(*held, OpId::add, {DType::F32, {33}}, {e, x}, {});
  EXPECT_EQ(held->stream_stats().commands, commands + 1);
  held->synchronize();
  Tensor again = run_op(*held, OpId::add, {DType::F32, {33}}, {e, x}, {});
  EXPECT_EQ(held->stream_stats().commands, commands + 1);
  expect_same_bits(*held, sum, again);
}

// Integers wrap around on the host as in the kernels (add, subtract, multiply, negate; the
// extremes and random bit patterns), large as a host step and small at once; integer division
// (quotient) stays on the device.
TEST(ElementwiseHost, IntegersWrapAroundAsTheKernelsDo) {
  auto dev = shared_device();
  if (!on_cpu_driver(*dev)) GTEST_SKIP() << "the host path is for CPU drivers";
  std::mt19937 rng(sample_seed() + 60);
  for (DType t : {DType::S32, DType::S64, DType::U32, DType::U64}) {
    if (!supports_op(*dev, "add", {t, {4}}, {t, t})) continue;
    for (int64_t n : {int64_t(70001), int64_t(33)}) {
      size_t size = dtype_size(t);
      std::vector<std::byte> xs(size_t(n) * size), ys(size_t(n) * size);
      for (auto* bytes : {&xs, &ys})
        for (int64_t i = 0; i < n; ++i) {
          uint64_t v = uint64_t(rng()) << 32 | rng();
          if (i % 7 == 0) v = i % 2 ? ~uint64_t(0) >> 1 : uint64_t(1) << (size * 8 - 1);  // the extremes
          std::memcpy(bytes->data() + size_t(i) * size, &v, size);
        }
      Tensor x = from_host(*dev, t, {n}, xs.data(), xs.size()), y = from_host(*dev, t, {n}, ys.data(), ys.size());
      for (OpId op : {OpId::add, OpId::subtract, OpId::multiply, OpId::negate}) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::string(op_info(op).name) + " n " + std::to_string(n));
        std::vector<Tensor> in = op == OpId::negate ? std::vector<Tensor>{x} : std::vector<Tensor>{x, y};
        Tensor kernel;
        {
          ScopedTuning off("ew.host", "0");
          kernel = run_op(*dev, op, {t, {n}}, in, {});
        }
        dev->synchronize();
        uint64_t commands = dev->stream_stats().commands;
        Tensor host = run_op(*dev, op, {t, {n}}, in, {});
        EXPECT_EQ(dev->stream_stats().commands, commands);
        expect_same_bits(*dev, kernel, host);
      }
      dev->synchronize();
      uint64_t commands = dev->stream_stats().commands;
      run_op(*dev, OpId::quotient, {t, {n}}, {x, y}, {});
      EXPECT_GT(dev->stream_stats().commands, commands);
    }
  }
}
