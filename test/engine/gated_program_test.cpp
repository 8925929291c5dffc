// Programs gated on the device (Program::run_gated, VK_EXT_conditional_rendering): a run's kernels
// run only where its flag, computed by earlier work on the same stream, is nonzero. A donated
// input written in place shows which: its buffer holds the update after a run that ran, and its
// old bits after one that was skipped.
#include "graph/graph.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// w - 0.5 * g, with `w` donated to it.
Graph donated_update(const Shape& shape) {
  Graph g;
  uint32_t w = g.input(DType::F32, shape);
  uint32_t grad = g.input(DType::F32, shape);
  ShapeAttrs half;
  half.value = AttrNumber{AttrNumber::Kind::Float, 0, 0, 0.5, 0};
  uint32_t rate = g.add(OpId::constant, {DType::F32, {}}, {}, Attrs::of(half));
  uint32_t step = g.add(OpId::multiply, {DType::F32, shape}, {rate, grad});
  g.output(g.add(OpId::subtract, {DType::F32, shape}, {w, step}));
  g.donate(w, 0);
  return g;
}

// `value` as an s32 flag that a kernel on the stream writes (the gate then depends on it).
Tensor flag_written_on_device(Device& dev, DType type, std::vector<int32_t> values) {
  Tensor given = upload(dev, type, {int64_t(values.size())}, values);
  Tensor zero = upload(dev, type, {int64_t(values.size())}, std::vector<int32_t>(values.size(), 0));
  return run_op(dev, OpId::add, {type, {int64_t(values.size())}}, {given, zero});
}

std::vector<float> floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

TEST(Programs, AGatedRunComputesOnlyWhereItsFlagIsSet) {
  auto dev = shared_device();
  if (!dev->info().features.conditional_rendering) GTEST_SKIP() << "the device has no VK_EXT_conditional_rendering";
  const Shape shape{1031};  // straddles workgroups
  auto program = compile_program(*dev, donated_update(shape));
  ASSERT_EQ(program->stats().in_place, 1u);
  ASSERT_TRUE(program->runs_without_blocking());
  std::vector<float> w0 = floats(shape[0], 12), g0 = floats(shape[0], 13);
  Tensor grad = upload(*dev, DType::F32, shape, g0);
  // The update as an ungated run computes it.
  auto run_plain = [&](const std::vector<float>& w) {
    return download<float>(*dev, program->run(*dev, {upload(*dev, DType::F32, shape, w), grad})[0]);
  };
  const std::vector<float> updated = run_plain(w0);

  // Flags as values a kernel just wrote, a nonzero one with only its top bit set, and one read
  // from the second element of its tensor (a view at an offset).
  struct Case {
    DType type;
    std::vector<int32_t> values;
    int64_t offset;
    bool runs;
  };
  const std::vector<Case> cases = {{DType::S32, {0}, 0, false},
                                   {DType::S32, {1}, 0, true},
                                   {DType::U32, {int32_t(0x80000000u)}, 0, true},
                                   {DType::S32, {1, 0}, 1, false},
                                   {DType::S32, {0, -1}, 1, true}};
  for (const Case& c : cases) {
    Tensor w = upload(*dev, DType::F32, shape, w0);
    Tensor flag = flag_written_on_device(*dev, c.type, c.values);
    Tensor gate = flag;
    gate.shape = {};
    gate.strides = {};
    gate.offset = c.offset;
    Tensor got = program->run_gated(*dev, {w, grad}, gate)[0];
    EXPECT_EQ(got.buffer, w.buffer);
    std::vector<float> bits = download<float>(*dev, got);
    EXPECT_EQ(std::memcmp(bits.data(), (c.runs ? updated : w0).data(), bits.size() * 4), 0)
        << "flag " << c.values[size_t(c.offset)] << ": expected the run to be " << (c.runs ? "done" : "skipped");
  }

  // Runs after one another in one submission, each gated on its own flag.
  Tensor w = upload(*dev, DType::F32, shape, w0);
  std::vector<float> want = w0;
  for (int32_t k = 0; k < 6; ++k) {
    w = program->run_gated(*dev, {w, grad}, flag_written_on_device(*dev, DType::S32, {k % 3 == 1}))[0];
    if (k % 3 == 1) want = run_plain(want);
  }
  std::vector<float> bits = download<float>(*dev, w);
  EXPECT_EQ(std::memcmp(bits.data(), want.data(), bits.size() * 4), 0);
}

TEST(Programs, AGateIsAnIntegerWordOnTheDevice) {
  auto dev = shared_device();
  if (!dev->info().features.conditional_rendering) GTEST_SKIP() << "the device has no VK_EXT_conditional_rendering";
  auto program = compile_program(*dev, donated_update({8}));
  Tensor w = upload(*dev, DType::F32, {8}, floats(8, 3));
  Tensor grad = upload(*dev, DType::F32, {8}, floats(8, 4));
  Tensor as_float = upload(*dev, DType::F32, {}, std::vector<float>{1.0f});
  Tensor empty_flag = upload(*dev, DType::S32, {0}, std::vector<int32_t>{});
  Tensor freed = upload(*dev, DType::S32, {}, std::vector<int32_t>{1});
  freed.buffer.reset();
  for (const Tensor* gate : {&as_float, &empty_flag, &freed}) {
    try {
      program->run_gated(*dev, {w, grad}, *gate);
      ADD_FAILURE() << "a gate of type " << dtype_name(gate->type) << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(e.kind(), ErrorKind::Unsupported) << e.what();
    }
  }
}
