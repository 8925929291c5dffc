// Reductions with fused elementwise work (graph/prologue_fusion.hpp, graph/epilogue_fusion.hpp):
// a sum, product, max or min gives, bit for bit, the ops run one by one, on fresh random
// inputs. Epilogues (ops/elementwise/offset_epilogue.hpp, in the final pass): an SGD-style
// update (b - lr * x) with the bias shaped like the result, broadcast into it, or a scalar; a
// type change (a comparison into u8); NaN, infinities and signed zeros. Prologues
// (ops/reduce/reduce_prologue.hpp, in the first pass's loads): softmax's exp(x - m) * y over one
// to three tensors, one broadcast along the reduced axis, one transposed (copied first); a
// comparison into u8 summed into u32. On f32, f16 (accumulated in f32), s32 and f64; columns
// in chunks (two passes) or on the GPUs' plan shared by invocations a workgroup apart, rows
// shared by a workgroup, the whole tensor, kept axes, size-1 axes, empty reduced axes and
// empty results. Both in one reduction. A graph's bias gradient and update, softmax
// denominator and cross-entropy rows, and a scaled sum of squares each become one reduction.
#include <cstring>

#include "graph/graph.hpp"
#include "op_case_util.hpp"
#include "ops/reduce/reduce_attrs.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct Case {
  const char* name;
  Shape input;
  std::vector<int64_t> axes;  // empty: every axis
  bool keep = false;
};

const Case kCases[] = {
    {"columns, two passes (CPU drivers)", {256, 40}, {0}},
    {"rows shared by a workgroup", {37, 300}, {1}},
    {"everything, two passes", {5000}, {}},
    {"middle axis kept", {3, 4, 5}, {1}, true},
    {"outer and inner axes (copied first; no prologue)", {4, 6, 5}, {0, 2}},
    {"size-1 axes", {7, 1, 9}, {0}},
    {"empty reduced axis", {3, 0, 4}, {1}},
    {"empty result", {0, 5}, {1}},
};
// The cases a prologue takes (its reduced axes together).
std::vector<Case> prologue_cases() {
  std::vector<Case> c;
  for (const Case& k : kCases)
    if (k.axes.size() < 2) c.push_back(k);
  return c;
}

ReduceAttrs attrs_of(const Case& c) {
  ReduceAttrs a;
  a.all_axes = c.axes.empty();
  a.axes = c.axes;
  a.keep_axes = c.keep;
  return a;
}

bool reduced_axis(const Case& c, size_t d) {
  return c.axes.empty() || std::find(c.axes.begin(), c.axes.end(), int64_t(d)) != c.axes.end();
}

Shape out_shape(const Case& c) {
  Shape s;
  for (size_t d = 0; d < c.input.size(); ++d)
    if (!reduced_axis(c, d)) s.push_back(c.input[d]);
    else if (c.keep) s.push_back(1);
  return s;
}

// Epilogues. The reduction, then each step as its own op.
Tensor unfused(Device& d, OpId op, const Tensor& x, const ReduceAttrs& a, DType product, const Shape& out,
               const std::vector<Tensor>& extras, const ElementwiseChain& chain) {
  std::vector<Tensor> inputs{run_op(d, op, {product, out}, {x}, Attrs::of(a))};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_steps_one_by_one(d, inputs, chain, out);
}

Tensor fused(Device& d, OpId op, const Tensor& x, ReduceAttrs a, DType product, const Shape& out,
             const std::vector<Tensor>& extras, const ElementwiseChain& chain) {
  a.epilogue = chain;
  a.product = product;
  std::vector<Tensor> inputs{x};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_op(d, op, {chain.steps.back().out, out}, inputs, Attrs::of(a));
}

// b - lr * reduction, b of the result's shape, or of its last axis only (broadcast).
void sgd_update(Device& d, OpId op, const Case& c, DType t, bool broadcast_bias, std::mt19937& rng) {
  SCOPED_TRACE(std::string(c.name) + ", " + std::string(op_info(op).name) + ", " + std::string(dtype_name(t)) +
               (broadcast_bias ? ", bias broadcast" : ""));
  Shape out = out_shape(c);
  Shape bias = out;
  if (broadcast_bias && !bias.empty()) bias = {bias.back()};
  ElementwiseChain chain{{step(OpId::multiply, t, {in(0), in(2)}), step(OpId::subtract, t, {in(1), st(0)})}};
  Tensor x = random_tensor(d, t, c.input, rng);
  std::vector<Tensor> extras{random_tensor(d, t, bias, rng), scalar(d, t, is_integer(t) ? 3 : 0.125)};
  ReduceAttrs a = attrs_of(c);
  Tensor want = unfused(d, op, x, a, t, out, extras, chain);
  expect_same_bits(d, want, fused(d, op, x, a, t, out, extras, chain));
}

class ReduceFusion : public DeviceTest {
 protected:
  std::vector<DType> types() {
    std::vector<DType> t{DType::F32, DType::F16, DType::S32};
    if (device_->has(kCapFloat64)) t.push_back(DType::F64);
    return t;
  }
};

TEST_F(ReduceFusion, EpilogueSgdUpdateEveryGeometryAndType) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 31);
  for (const Case& c : kCases) sgd_update(d, OpId::sum, c, DType::F32, false, rng);
  // The other types and ops on a sample of the geometries (each is its own kernel compile).
  for (DType t : types())
    for (const Case& c : sample_cases(std::vector<Case>(std::begin(kCases), std::end(kCases)), 3))
      for (OpId op : {OpId::sum, OpId::reduce_max, OpId::reduce_min})
        if (t != DType::F32 || op != OpId::sum) sgd_update(d, op, c, t, false, rng);
  sgd_update(d, OpId::product, kCases[3], DType::F32, false, rng);
  sgd_update(d, OpId::product, kCases[1], DType::S32, false, rng);
  sgd_update(d, OpId::sum, kCases[0], DType::F32, true, rng);
  sgd_update(d, OpId::sum, kCases[4], DType::F16, true, rng);
  // The GPUs' plans: the columns in one pass, shared by invocations a workgroup apart.
  ScopedTuning gpu("gpu_paths", "1");
  for (size_t i : {0, 1, 2, 4}) sgd_update(d, OpId::sum, kCases[i], DType::F32, i == 0, rng);
}

// max(x) > threshold: the result's type is the chain's (u8), the reduction's f32; with NaN,
// infinities and signed zeros among the values.
TEST_F(ReduceFusion, EpilogueTypeChangeAndSpecialValues) {
  Device& d = *device_;
  const Case& c = kCases[1];
  Shape out = out_shape(c);
  std::vector<float> v(size_t(shape_size(c.input)));
  std::mt19937 rng(sample_seed() + 32);
  std::uniform_real_distribution<float> u(-4, 4);
  for (auto& x : v) x = u(rng);
  v[3] = NAN, v[400] = INFINITY, v[700] = -INFINITY, v[1000] = -0.0f;
  Tensor x = from_host(d, DType::F32, c.input, v.data(), v.size() * 4);
  std::vector<Tensor> extras{random_tensor(d, DType::F32, out, rng)};
  ElementwiseChain chain{{step(OpId::greater, DType::U8, {in(0), in(1)})}};
  for (OpId op : {OpId::reduce_max, OpId::sum}) {
    SCOPED_TRACE(op_info(op).name);
    Tensor want = unfused(d, op, x, attrs_of(c), DType::F32, out, extras, chain);
    Tensor got = fused(d, op, x, attrs_of(c), DType::F32, out, extras, chain);
    EXPECT_EQ(got.type, DType::U8);
    expect_same_bits(d, want, got);
  }
  // The values themselves through an identity-like chain (x * 1): NaN, infinities and -0.0 kept.
  ElementwiseChain keep{{step(OpId::multiply, DType::F32, {in(0), in(1)})}};
  std::vector<Tensor> one{scalar(d, DType::F32, 1)};
  Tensor want = unfused(d, OpId::sum, x, attrs_of(c), DType::F32, out, one, keep);
  expect_same_bits(d, want, fused(d, OpId::sum, x, attrs_of(c), DType::F32, out, one, keep));
}

TEST_F(ReduceFusion, EpilogueCheckRefusesWhatItCannotFuse) {
  Device& d = *device_;
  ElementwiseChain chain{{step(OpId::add, DType::F32, {in(0), in(1)})}};
  auto spec = [](Shape s) { return contiguous_spec(DType::F32, s); };
  std::vector<TensorSpec> inputs{spec({4, 5}), spec({5})};
  ReduceAttrs a;
  a.all_axes = false, a.axes = {0}, a.epilogue = chain, a.product = DType::F32;
  EXPECT_TRUE(bool(check_op(d, OpId::sum, {DType::F32, {5}}, inputs, Attrs::of(a))));
  // An extra tensor that does not broadcast to the result.
  std::vector<TensorSpec> wrong{spec({4, 5}), spec({4})};
  Support s = check_op(d, OpId::sum, {DType::F32, {5}}, wrong, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  EXPECT_NE(s.reason.find("broadcast"), std::string::npos) << s.reason;
  // all/any take no epilogue; without one, an extra tensor is one too many.
  s = check_op(d, OpId::any, {DType::F32, {5}}, inputs, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_NE(s.reason.find("takes no epilogue"), std::string::npos) << s.reason;
  a.epilogue.reset();
  s = check_op(d, OpId::sum, {DType::F32, {5}}, inputs, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_NE(s.reason.find("takes 1 tensors"), std::string::npos) << s.reason;
}

// sum over the batch -> times lr -> subtracted from the bias, as graph nodes: one reduction's
// launches where the unfused graph has those and a chain's; the same bits as the ops eagerly.
TEST_F(ReduceFusion, EpilogueGraphFusesBiasGradientAndUpdate) {
  Device& d = *device_;
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  std::mt19937 rng(sample_seed() + 33);
  const int64_t B = 256, N = 48;
  const DType t = DType::F32;
  std::vector<Tensor> inputs{random_tensor(d, t, {B, N}, rng), random_tensor(d, t, {N}, rng), scalar(d, t, 0.01)};
  ReduceAttrs over_batch;
  over_batch.all_axes = false, over_batch.axes = {0};
  auto build = [&](bool sum_is_output) {
    Graph g;
    uint32_t x = g.input(t, {B, N}), b = g.input(t, {N}), lr = g.input(t, {});
    uint32_t grad = g.add(OpId::sum, {t, {N}}, {x}, Attrs::of(over_batch));
    uint32_t step_size = g.add(OpId::multiply, {t, {N}}, {lr, grad});
    g.output(g.add(OpId::subtract, {t, {N}}, {b, step_size}));
    if (sum_is_output) g.output(grad);
    return compile_graph(d, g, inputs);
  };
  Graph sum_only;
  sum_only.output(sum_only.add(OpId::sum, {t, {N}}, {sum_only.input(t, {B, N})}, Attrs::of(over_batch)));
  size_t sum_launches = compile_graph(d, sum_only, {inputs[0]}).executable().launches().size();
  GraphExecutable fused_graph = build(false), separate = build(true);
  EXPECT_EQ(fused_graph.executable().launches().size(), sum_launches);
  EXPECT_EQ(separate.executable().launches().size(), sum_launches + 1);
  Tensor want = separate.run(d, inputs)[0];
  expect_same_bits(d, want, fused_graph.run(d, inputs)[0]);
  Tensor grad = run_op(d, OpId::sum, {t, {N}}, {inputs[0]}, Attrs::of(over_batch));
  Tensor eager = run_op(d, OpId::subtract, {t, {N}},
                        {inputs[1], run_op(d, OpId::multiply, {t, {N}}, {inputs[2], grad}, Attrs{})}, Attrs{});
  expect_same_bits(d, eager, want);
}

// The input's shape with its reduced axes of extent 1: a value per row, broadcast along it.
Shape per_row_shape(const Case& c) {
  Shape s = c.input;
  for (size_t d = 0; d < s.size(); ++d)
    if (reduced_axis(c, d)) s[d] = 1;
  return s;
}

// Prologues. The chain's steps one by one, then the reduction.
Tensor unfused(Device& d, OpId op, const std::vector<Tensor>& inputs, const ElementwiseChain& chain, const Shape& shape,
               const ReduceAttrs& a, DType out, const Shape& out_shape) {
  return run_op(d, op, {out, out_shape}, {run_steps_one_by_one(d, inputs, chain, shape)}, Attrs::of(a));
}

Tensor fused(Device& d, OpId op, const std::vector<Tensor>& inputs, const ElementwiseChain& chain, const Shape& shape,
             ReduceAttrs a, DType out, const Shape& out_shape) {
  a.prologue = chain;
  a.prologue_inputs = uint32_t(inputs.size());
  a.prologue_shape = shape;
  return run_op(d, op, {out, out_shape}, inputs, Attrs::of(a));
}

// op(exp(x - m) * y): x and y of the input's shape, m one value per row (broadcast); integers
// (no exp) take (x - m) * y.
void three_tensors(Device& d, OpId op, const Case& c, DType t, std::mt19937& rng) {
  SCOPED_TRACE(std::string(c.name) + ", " + std::string(op_info(op).name) + ", " + std::string(dtype_name(t)));
  ElementwiseChain chain;
  chain.steps.push_back(step(OpId::subtract, t, {in(0), in(1)}));
  if (is_float(t)) chain.steps.push_back(step(OpId::exp, t, {st(0)}));
  chain.steps.push_back(step(OpId::multiply, t, {st(uint32_t(chain.steps.size() - 1)), in(2)}));
  std::vector<Tensor> inputs{random_tensor(d, t, c.input, rng), random_tensor(d, t, per_row_shape(c), rng),
                             random_tensor(d, t, c.input, rng)};
  ReduceAttrs a = attrs_of(c);
  Tensor want = unfused(d, op, inputs, chain, c.input, a, t, out_shape(c));
  expect_same_bits(d, want, fused(d, op, inputs, chain, c.input, a, t, out_shape(c)));
}

TEST_F(ReduceFusion, PrologueThreeTensorsEveryGeometryAndType) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 41);
  for (const Case& c : prologue_cases()) three_tensors(d, OpId::sum, c, DType::F32, rng);
  for (DType t : types())
    for (const Case& c : sample_cases(prologue_cases(), 3))
      for (OpId op : {OpId::sum, OpId::reduce_max, OpId::reduce_min})
        if (t != DType::F32 || op != OpId::sum) three_tensors(d, op, c, t, rng);
  three_tensors(d, OpId::product, kCases[3], DType::F32, rng);
  // The GPUs' plans: columns in one pass, shared by invocations a workgroup apart.
  ScopedTuning gpu("gpu_paths", "1");
  for (size_t i : {0, 1, 2}) three_tensors(d, OpId::sum, kCases[i], DType::F32, rng);
}

// equal(x, m) summed as u32 (Nx's grad of max counts ties so); and a transposed input, read
// through a copy.
TEST_F(ReduceFusion, PrologueComparisonIntoU8AndTransposedInput) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 42);
  const Case& c = kCases[1];
  Tensor x = random_tensor(d, DType::F32, c.input, rng);
  Tensor m = run_op(d, OpId::reduce_max, {DType::F32, per_row_shape(c)}, {x}, [&] {
    ReduceAttrs a = attrs_of(c);
    a.keep_axes = true;
    return Attrs::of(a);
  }());
  ElementwiseChain ties{{step(OpId::equal, DType::U8, {in(0), in(1)})}};
  Tensor want = unfused(d, OpId::sum, {x, m}, ties, c.input, attrs_of(c), DType::U32, out_shape(c));
  Tensor got = fused(d, OpId::sum, {x, m}, ties, c.input, attrs_of(c), DType::U32, out_shape(c));
  expect_same_bits(d, want, got);
  auto counts = to_host(d, got);
  uint32_t first = 0;
  std::memcpy(&first, counts.data(), 4);
  EXPECT_GE(first, 1u);  // every row holds its maximum
  // x^T's rows: a view whose reduced axis is not its innermost.
  Tensor stored = random_tensor(d, DType::F32, {c.input[1], c.input[0]}, rng);
  Tensor xt = transpose_view(stored, {1, 0});
  ElementwiseChain square{{step(OpId::multiply, DType::F32, {in(0), in(0)})}};
  expect_same_bits(d, unfused(d, OpId::sum, {xt}, square, c.input, attrs_of(c), DType::F32, out_shape(c)),
                   fused(d, OpId::sum, {xt}, square, c.input, attrs_of(c), DType::F32, out_shape(c)));
}

TEST_F(ReduceFusion, PrologueCheckRefusesWhatItCannotFuse) {
  Device& d = *device_;
  auto spec = [](Shape s) { return contiguous_spec(DType::F32, s); };
  ElementwiseChain chain{{step(OpId::multiply, DType::F32, {in(0), in(1)})}};
  ReduceAttrs a;
  a.all_axes = false, a.axes = {1}, a.prologue = chain, a.prologue_inputs = 2, a.prologue_shape = {4, 5};
  std::vector<TensorSpec> two{spec({4, 5}), spec({4, 1})};
  EXPECT_TRUE(bool(check_op(d, OpId::sum, {DType::F32, {4}}, two, Attrs::of(a))));
  // A tensor that does not broadcast to the reduced tensor.
  Support s = check_op(d, OpId::sum, {DType::F32, {4}}, std::vector<TensorSpec>{spec({4, 5}), spec({3})}, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  // Reduced axes apart (kept ones between): the prologue has no rows to read by.
  ReduceAttrs apart = a;
  apart.axes = {0, 2}, apart.prologue_shape = {2, 3, 4};
  s = check_op(d, OpId::sum, {DType::F32, {3}}, std::vector<TensorSpec>{spec({2, 3, 4}), spec({2, 3, 4})},
               Attrs::of(apart));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported);
  EXPECT_NE(s.reason.find("together"), std::string::npos) << s.reason;
  // Both a prologue and an epilogue (its tensors after the prologue's); a logical reduction;
  // more tensors than the prologue reads.
  ReduceAttrs both = a;
  both.epilogue = ElementwiseChain{{step(OpId::subtract, DType::F32, {in(0), in(1)})}};
  both.product = DType::F32;
  std::vector<TensorSpec> two_and_bias{spec({4, 5}), spec({4, 1}), spec({4})};
  EXPECT_TRUE(bool(check_op(d, OpId::sum, {DType::F32, {4}}, two_and_bias, Attrs::of(both))));
  EXPECT_FALSE(check_op(d, OpId::sum, {DType::F32, {4}}, two, Attrs::of(both)).native);
  EXPECT_FALSE(check_op(d, OpId::any, {DType::U8, {4}}, two, Attrs::of(a)).native);
  std::vector<TensorSpec> three{spec({4, 5}), spec({4, 1}), spec({4})};
  s = check_op(d, OpId::sum, {DType::F32, {4}}, three, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
}

// Both in one reduction: b - lr * op(exp(x - m) * y) (integers: (x - m) * y), the prologue in
// the first pass and the epilogue in the final one (the same pass where there is one); the
// bits of the chain's steps, the reduction and the update's steps run one by one.
void prologue_and_epilogue(Device& d, OpId op, const Case& c, DType t, std::mt19937& rng) {
  SCOPED_TRACE(std::string(c.name) + ", " + std::string(op_info(op).name) + ", " + std::string(dtype_name(t)));
  ElementwiseChain pro;
  pro.steps.push_back(step(OpId::subtract, t, {in(0), in(1)}));
  if (is_float(t)) pro.steps.push_back(step(OpId::exp, t, {st(0)}));
  pro.steps.push_back(step(OpId::multiply, t, {st(uint32_t(pro.steps.size() - 1)), in(2)}));
  ElementwiseChain epi{{step(OpId::multiply, t, {in(0), in(2)}), step(OpId::subtract, t, {in(1), st(0)})}};
  std::vector<Tensor> inputs{random_tensor(d, t, c.input, rng), random_tensor(d, t, per_row_shape(c), rng),
                             random_tensor(d, t, c.input, rng)};
  Shape out = out_shape(c);
  std::vector<Tensor> extras{random_tensor(d, t, out, rng), scalar(d, t, is_integer(t) ? 3 : 0.125)};
  ReduceAttrs a = attrs_of(c);
  Tensor reduced = unfused(d, op, inputs, pro, c.input, a, t, out);
  std::vector<Tensor> update{reduced};
  update.insert(update.end(), extras.begin(), extras.end());
  Tensor want = run_steps_one_by_one(d, update, epi, out);
  a.prologue = pro, a.prologue_inputs = 3, a.prologue_shape = c.input;
  a.epilogue = epi, a.product = t;
  std::vector<Tensor> all = inputs;
  all.insert(all.end(), extras.begin(), extras.end());
  expect_same_bits(d, want, run_op(d, op, {t, out}, all, Attrs::of(a)));
}

TEST_F(ReduceFusion, PrologueAndEpilogueInOneReduction) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 44);
  for (const Case& c : prologue_cases()) prologue_and_epilogue(d, OpId::sum, c, DType::F32, rng);
  for (DType t : types())
    for (const Case& c : sample_cases(prologue_cases(), 2))
      for (OpId op : {OpId::sum, OpId::reduce_max})
        if (t != DType::F32 || op != OpId::sum) prologue_and_epilogue(d, op, c, t, rng);
  // The GPUs' plans: columns in one pass, rows shared by a workgroup, two passes.
  ScopedTuning gpu("gpu_paths", "1");
  for (size_t i : {0, 1, 2}) prologue_and_epilogue(d, OpId::sum, kCases[i], DType::F32, rng);
}

// A mean of squares and its scale, sum(x * x) * s + b, as graph nodes: one kernel.
TEST_F(ReduceFusion, GraphFusesAPrologueAndAnEpilogueIntoOneReduction) {
  Device& d = *device_;
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  std::mt19937 rng(sample_seed() + 45);
  const int64_t B = 64, N = 300;
  const DType t = DType::F32;
  std::vector<Tensor> inputs{random_tensor(d, t, {B, N}, rng), scalar(d, t, 1.0 / N), random_tensor(d, t, {B}, rng)};
  ReduceAttrs rows;
  rows.all_axes = false, rows.axes = {1};
  Graph g;
  uint32_t x = g.input(t, {B, N}), s = g.input(t, {}), b = g.input(t, {B});
  uint32_t squares = g.add(OpId::multiply, {t, {B, N}}, {x, x});
  uint32_t r = g.add(OpId::sum, {t, {B}}, {squares}, Attrs::of(rows));
  g.output(g.add(OpId::add, {t, {B}}, {g.add(OpId::multiply, {t, {B}}, {r, s}), b}));
  GraphExecutable fused_graph = compile_graph(d, g, inputs);
  EXPECT_EQ(fused_graph.executable().launches().size(), 1u);
  Tensor sq = run_op(d, OpId::multiply, {t, {B, N}}, {inputs[0], inputs[0]});
  Tensor sum = run_op(d, OpId::sum, {t, {B}}, {sq}, Attrs::of(rows));
  Tensor want = run_op(d, OpId::add, {t, {B}}, {run_op(d, OpId::multiply, {t, {B}}, {sum, inputs[1]}), inputs[2]});
  expect_same_bits(d, want, fused_graph.run(d, inputs)[0]);
}

// log-softmax's denominator, sum(exp(x - max(x))), and a cross-entropy's sum(logp * y) as graph
// nodes: each reduction takes its chain (one kernel fewer each) where the chain's result is not
// otherwise needed; the bits of the ops eagerly.
TEST_F(ReduceFusion, PrologueGraphFusesSoftmaxAndCrossEntropyRows) {
  Device& d = *device_;
  ScopedTuning per_node{"program.region", "0"};  // the launches of a kernel per node, counted
  std::mt19937 rng(sample_seed() + 43);
  const int64_t B = 256, N = 10;
  for (DType t : {DType::F32, DType::F16}) {
    SCOPED_TRACE(dtype_name(t));
    std::vector<Tensor> inputs{random_tensor(d, t, {B, N}, rng), random_tensor(d, t, {B, N}, rng)};
    ReduceAttrs rows;
    rows.all_axes = false, rows.axes = {1};
    ReduceAttrs rows_kept = rows;
    rows_kept.keep_axes = true;
    auto build = [&](bool exp_is_output) {
      Graph g;
      uint32_t x = g.input(t, {B, N}), y = g.input(t, {B, N});
      uint32_t m = g.add(OpId::reduce_max, {t, {B, 1}}, {x}, Attrs::of(rows_kept));
      uint32_t shifted = g.add(OpId::subtract, {t, {B, N}}, {x, m});
      uint32_t e = g.add(OpId::exp, {t, {B, N}}, {shifted});
      g.output(g.add(OpId::sum, {t, {B}}, {e}, Attrs::of(rows)));
      uint32_t ce = g.add(OpId::multiply, {t, {B, N}}, {x, y});
      g.output(g.add(OpId::sum, {t, {B}}, {ce}, Attrs::of(rows)));
      if (exp_is_output) g.output(e);
      return compile_graph(d, g, inputs);
    };
    GraphExecutable fused_graph = build(false), separate = build(true);
    // max, then (subtract, exp, sum) and (multiply, sum) in one kernel each where fused.
    EXPECT_EQ(fused_graph.executable().launches().size() + 1, separate.executable().launches().size());
    auto want = separate.run(d, inputs);
    auto got = fused_graph.run(d, inputs);
    expect_same_bits(d, want[0], got[0]);
    expect_same_bits(d, want[1], got[1]);
    Tensor m = run_op(d, OpId::reduce_max, {t, {B, 1}}, {inputs[0]}, Attrs::of(rows_kept));
    Tensor e = run_op(d, OpId::exp, {t, {B, N}}, {run_op(d, OpId::subtract, {t, {B, N}}, {inputs[0], m})});
    expect_same_bits(d, run_op(d, OpId::sum, {t, {B}}, {e}, Attrs::of(rows)), got[0]);
    Tensor ce = run_op(d, OpId::multiply, {t, {B, N}}, {inputs[0], inputs[1]});
    expect_same_bits(d, run_op(d, OpId::sum, {t, {B}}, {ce}, Attrs::of(rows)), got[1]);
  }
}

}  // namespace
