// Simplification (graph/simplify.hpp): put_slice into a tensor a constant fills is one pad of
// the slice with that constant, slices and put_slices at constant tensor starts take them as
// static starts, a pad without padding is its input, and a comparison with an integer constant
// a float holds exactly compares floats; each with the bits of the ops run one by one, starts
// clamped as Nx clamps them; a float division by a power of two (or by a select of two, Nx's
// gradient of max) multiplies by its reciprocal.
#include "graph/graph.hpp"
#include "graph/simplify.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

Attrs constant_attrs(AttrNumber value) {
  ShapeAttrs a;
  a.value = value;
  return Attrs::of(a);
}

AttrNumber integer(int64_t i) { return AttrNumber{.kind = AttrNumber::Kind::Int, .i = i}; }
AttrNumber real(double v) { return AttrNumber{.kind = AttrNumber::Kind::Float, .re = v}; }

// put_slice of `slice` into a `fill_type` tensor of `value`, the starts given as constant
// scalars (Nx's grad of a slice): as a program, and op by op.
void expect_put_slice_into_fill(DType fill_type, DType slice_type, const Shape& out_shape, const Shape& slice_shape,
                                std::vector<int64_t> starts, AttrNumber value) {
  SCOPED_TRACE("rank " + std::to_string(out_shape.size()) + ", slice of " + std::to_string(shape_size(slice_shape)));
  auto dev = shared_device();
  const size_t rank = out_shape.size();
  ShapeAttrs put;
  put.starts.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) put.dynamic_axes.push_back(int64_t(d));

  Graph g;
  uint32_t slice = g.input(slice_type, slice_shape);
  uint32_t fill = g.add(OpId::constant, {fill_type, out_shape}, {}, constant_attrs(value));
  std::vector<uint32_t> inputs{fill, slice};
  for (int64_t s : starts) inputs.push_back(g.add(OpId::constant, {DType::S32, {}}, {}, constant_attrs(integer(s))));
  // The result has the slice's type (Nx merges the two; here the slice's is the wider).
  g.output(g.add(OpId::put_slice, {slice_type, out_shape}, inputs, Attrs::of(put)));
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().launches, 1u) << "one pad";

  std::mt19937 rng(7);
  Tensor x = random_tensor(*dev, slice_type, slice_shape, rng);
  Tensor got = program->run(*dev, {x})[0];
  std::vector<Tensor> eager{run_op(*dev, OpId::constant, {fill_type, out_shape}, {}, constant_attrs(value)), x};
  for (int64_t s : starts) eager.push_back(scalar(*dev, DType::S32, double(s)));
  Tensor want = run_op(*dev, OpId::put_slice, {slice_type, out_shape}, eager, Attrs::of(put));
  expect_same_bits(*dev, want, got);
}

}  // namespace

TEST(Simplify, PutSliceIntoAConstantIsOnePadWithTheEagerBits) {
  // Eight Schools' gradient: f64 slices into f32 zeros of its parameter vector.
  expect_put_slice_into_fill(DType::F32, DType::F64, {10}, {8}, {2}, real(0.0));
  expect_put_slice_into_fill(DType::F32, DType::F64, {10}, {1}, {0}, real(0.0));
  // Starts past the end and below zero clamp; a fill that is not zero; integers; rank 3.
  expect_put_slice_into_fill(DType::F64, DType::F64, {10}, {8}, {5}, real(-1.5));
  expect_put_slice_into_fill(DType::F32, DType::F64, {10}, {3}, {4}, real(0.1));  // 0.1f, widened
  expect_put_slice_into_fill(DType::S32, DType::S32, {7, 9}, {3, 4}, {-2, 6}, integer(-7));
  expect_put_slice_into_fill(DType::F32, DType::F32, {3, 17, 5}, {2, 16, 5}, {1, 0, 0}, real(2.0));
}

TEST(Simplify, SlicesAtConstantStartsAreViewsWithTheEagerBits) {
  auto dev = shared_device();
  ShapeAttrs slice;
  slice.starts = {0, 1};
  slice.lengths = {2, 3};
  slice.steps = {1, 1};
  slice.dynamic_axes = {0};
  Graph g;
  uint32_t x = g.input(DType::F32, {6, 5});
  uint32_t start = g.add(OpId::constant, {DType::S64, {}}, {}, constant_attrs(integer(9)));  // clamps to 4
  uint32_t s = g.add(OpId::slice, {DType::F32, {2, 3}}, {x, start}, Attrs::of(slice));
  g.output(g.add(OpId::negate, {DType::F32, {2, 3}}, {s}));
  auto program = compile_program(*dev, g);
  EXPECT_EQ(program->stats().launches, 1u) << "the negate alone, reading the slice in place";

  std::mt19937 rng(3);
  Tensor input = random_tensor(*dev, DType::F32, {6, 5}, rng);
  Tensor got = program->run(*dev, {input})[0];
  Tensor sliced = run_op(*dev, OpId::slice, {DType::F32, {2, 3}}, {input, scalar(*dev, DType::S64, 9)}, Attrs::of(slice));
  expect_same_bits(*dev, run_op(*dev, OpId::negate, {DType::F32, {2, 3}}, {sliced}, {}), got);
}

TEST(Simplify, APadWithoutPaddingIsItsInput) {
  auto dev = shared_device();
  std::mt19937 rng(5);
  Tensor x = random_tensor(*dev, DType::F64, {4, 3}, rng);
  ShapeAttrs none;
  none.padding.assign(2, PadAxis{});
  Tensor same = run_op(*dev, OpId::pad, {DType::F64, {4, 3}}, {x, scalar(*dev, DType::F64, 0)}, Attrs::of(none));
  EXPECT_EQ(same.buffer, x.buffer);
  // Converting pads still convert.
  Tensor converted = run_op(*dev, OpId::pad, {DType::F32, {4, 3}}, {x, scalar(*dev, DType::F32, 0)}, Attrs::of(none));
  EXPECT_NE(converted.buffer, x.buffer);
  expect_same_bits(*dev, run_op(*dev, OpId::as_type, {DType::F32, {4, 3}}, {x}, {}), converted);
}

namespace {

// Every comparison of `x` (float) with an integer constant of `int_type` holding `value`, in
// both operand orders, as one program and op by op; `as_float`: whether the constant should
// compare as a float (a constant node of the float type in the simplified graph).
void expect_compare_with_constant(DType float_type, DType int_type, int64_t value, std::vector<double> xs,
                                  bool as_float) {
  SCOPED_TRACE(std::string(dtype_name(float_type)) + " against " + std::string(dtype_name(int_type)) + " " +
               std::to_string(value));
  auto dev = shared_device();
  const Shape shape{int64_t(xs.size())};
  Graph g;
  uint32_t x = g.input(float_type, shape);
  uint32_t c = g.add(OpId::constant, {int_type, {}}, {}, constant_attrs(integer(value)));
  const OpId ops[] = {OpId::equal, OpId::not_equal, OpId::greater, OpId::less, OpId::greater_equal, OpId::less_equal};
  for (OpId op : ops) {
    g.output(g.add(op, {DType::U8, shape}, {x, c}));
    g.output(g.add(op, {DType::U8, shape}, {c, x}));
  }
  Graph s = simplified(g, *dev);
  size_t float_constants = 0;
  for (const GraphNode& n : s.nodes()) float_constants += n.op == OpId::constant && n.out.type == float_type;
  EXPECT_EQ(float_constants > 0, as_float);

  std::vector<std::byte> bytes(xs.size() * dtype_size(float_type));
  for (size_t i = 0; i < xs.size(); ++i) store_real(float_type, xs[i], bytes.data() + i * dtype_size(float_type));
  Tensor input = from_host(*dev, float_type, shape, bytes.data(), bytes.size());
  auto program = compile_program(*dev, g);
  std::vector<Tensor> got = program->run(*dev, {input});
  Tensor k = run_op(*dev, OpId::constant, {int_type, {}}, {}, constant_attrs(integer(value)));
  size_t o = 0;
  for (OpId op : ops) {
    expect_same_bits(*dev, run_op(*dev, op, {DType::U8, shape}, {input, k}, {}), got[o++]);
    expect_same_bits(*dev, run_op(*dev, op, {DType::U8, shape}, {k, input}, {}), got[o++]);
  }
}

}  // namespace

TEST(Simplify, AComparisonWithAnIntegerConstantAFloatHoldsComparesFloats) {
  const double inf = INFINITY, nan = NAN, two53 = 9007199254740992.0;
  // ReLU's gradient: x == max(x, 0) with 0 an s64.
  expect_compare_with_constant(DType::F64, DType::S64, 0, {0.0, -0.0, 1e-310, -1e-310, 1.0, -1.0, nan, inf, -inf}, true);
  expect_compare_with_constant(DType::F32, DType::S32, -7, {-7.0, -6.999999523, -7.000000477, 7.0, nan, -inf}, true);
  expect_compare_with_constant(DType::F64, DType::U64, 1ll << 53, {two53, two53 + 2, two53 - 1, nan}, true);
  // Not exact in the float type: stays an exact mixed comparison (2^53 + 1 is not 2^53).
  expect_compare_with_constant(DType::F64, DType::S64, (1ll << 53) + 1, {two53, two53 + 2, nan, inf}, false);
  expect_compare_with_constant(DType::F32, DType::S32, (1 << 24) + 1, {16777216.0, 16777218.0, nan}, false);
}

namespace {

// x / d as one program and op by op, d a constant of `divisor_type` holding `divisor`, or (with
// `tie`) Nx's gradient of max: a select of that constant and 1 by a u8 input; `multiplies`:
// whether the simplified graph should hold no division.
void expect_division(DType type, DType x_type, DType divisor_type, AttrNumber divisor, bool tie, bool multiplies,
                     std::vector<double> xs) {
  SCOPED_TRACE(std::string(dtype_name(x_type)) + " / " + std::string(dtype_name(divisor_type)) + " into " +
               std::string(dtype_name(type)) + (tie ? " (a select)" : ""));
  auto dev = shared_device();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  while (xs.size() < 300) xs.push_back(dist(rng));
  const Shape shape{int64_t(xs.size())};
  std::vector<std::byte> bytes(xs.size() * dtype_size(x_type)), picks(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    store_real(x_type, xs[i], bytes.data() + i * dtype_size(x_type));
    picks[i] = std::byte(rng() % 2);
  }
  Tensor x = from_host(*dev, x_type, shape, bytes.data(), bytes.size());
  Tensor pick = from_host(*dev, DType::U8, shape, picks.data(), picks.size());
  const Attrs k_attrs = constant_attrs(divisor), one_attrs = constant_attrs(real(1.0));

  Graph g;
  uint32_t gx = g.input(x_type, shape), gpick = g.input(DType::U8, shape);
  uint32_t d = g.add(OpId::constant, {divisor_type, {}}, {}, k_attrs);
  if (tie)
    d = g.add(OpId::select, {type, shape}, {gpick, d, g.add(OpId::constant, {divisor_type, {}}, {}, one_attrs)});
  g.output(g.add(OpId::divide, {type, shape}, {gx, d}));
  size_t divisions = 0;
  const Graph s = simplified(g, *dev);
  for (const GraphNode& n : s.nodes()) divisions += n.op == OpId::divide;
  EXPECT_EQ(divisions == 0, multiplies);

  Tensor got = compile_program(*dev, g)->run(*dev, {x, pick})[0];
  Tensor k = run_op(*dev, OpId::constant, {divisor_type, {}}, {}, k_attrs);
  if (tie)
    k = run_op(*dev, OpId::select, {type, shape},
               {pick, k, run_op(*dev, OpId::constant, {divisor_type, {}}, {}, one_attrs)}, {});
  expect_same_bits(*dev, run_op(*dev, OpId::divide, {type, shape}, {x, k}, {}), got);
}

}  // namespace

TEST(Simplify, ADivisionByAPowerOfTwoMultipliesWithTheEagerBits) {
  const double inf = INFINITY, nan = NAN;
  // Specials, the ends of f32's normal and subnormal ranges, results that overflow or fall
  // into the subnormals.
  const std::vector<double> xs{0.0, -0.0, nan, inf, -inf, 1.0, -3.0, 0x1p-126, 0x1p-149, 0x1.fffffep127, 0x1p-140,
                               -0x1.8p-130, 1e-310, 0x1.fffffffffffffp1023};
  for (DType type : {DType::F32, DType::F64}) {
    for (double k : {2.0, 0.5, -4.0, 1.0, 0x1p-126, 0x1p100}) {
      expect_division(type, type, type, real(k), false, true, xs);
      expect_division(type, type, type, real(k), true, true, xs);
    }
    expect_division(type, type, DType::S32, integer(8), false, true, xs);
    expect_division(type, DType::F32, DType::F32, real(0.25), false, true, xs);
    // Not a power of two, or one whose reciprocal or itself is not a normal number: divides.
    expect_division(type, type, type, real(3.0), false, false, xs);
    expect_division(type, type, type, real(3.0), true, false, xs);
  }
  expect_division(DType::F64, DType::F64, DType::F64, real(0x1p1023), false, false, xs);
  expect_division(DType::F64, DType::F64, DType::F64, real(0x1p-1030), false, false, xs);
  expect_division(DType::F32, DType::F32, DType::F32, real(0x1p-140), false, false, xs);
  // f16 keeps its division (its rounding from double is its own).
  expect_division(DType::F16, DType::F16, DType::F16, real(2.0), false, false, {0.0, 1.0, -0.0, nan});
}
