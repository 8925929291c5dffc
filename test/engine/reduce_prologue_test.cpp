// Reduction prologues (ops/reduce/reduce_prologue.hpp) and their graph fusion
// (graph/prologue_fusion.hpp): a sum, product, max or min of an elementwise chain's result,
// computed per element where the reduction loads it, gives bit for bit the chain's ops run one
// by one and then the reduction, on fresh random inputs: softmax's exp(x - max) over rows, a
// cross-entropy's product, a comparison into u8 summed into u32; one to three tensors, one
// broadcast along the reduced axis, one transposed (copied first); on f32, f16, s32 and f64;
// columns in chunks (two passes) or on the GPUs' plan shared by invocations a workgroup apart,
// rows shared by a workgroup, the whole tensor, kept axes, size-1 axes, empty reduced axes and
// empty results. A graph's softmax denominator and a cross-entropy's row sums lose a kernel each.
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
    {"rows", {37, 300}, {1}},
    {"columns", {256, 40}, {0}},
    {"everything, two passes", {5000}, {}},
    {"middle axis kept", {3, 4, 5}, {1}, true},
    {"size-1 axes", {7, 1, 9}, {0}},
    {"empty reduced axis", {3, 0, 4}, {1}},
    {"empty result", {0, 5}, {1}},
};

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

// The input's shape with its reduced axes of extent 1: a value per row, broadcast along it.
Shape per_row_shape(const Case& c) {
  Shape s = c.input;
  for (size_t d = 0; d < s.size(); ++d)
    if (reduced_axis(c, d)) s[d] = 1;
  return s;
}

// The chain's steps one by one, then the reduction.
Tensor unfused(Device& d, OpId op, const std::vector<Tensor>& inputs, const ElementwiseChain& chain, const Shape& shape,
               const ReduceAttrs& a, DType out, const Shape& out_shape) {
  std::vector<Tensor> results;
  for (const ChainStep& s : chain.steps) {
    std::vector<Tensor> operands;
    for (const auto& o : s.operands)
      operands.push_back(o.from == ChainOperand::From::Input ? inputs[o.index] : results[o.index]);
    results.push_back(run_op(d, s.op, {s.out, shape}, operands, Attrs{}));
  }
  return run_op(d, op, {out, out_shape}, {results.back()}, Attrs::of(a));
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

class ReducePrologues : public DeviceTest {
 protected:
  std::vector<DType> types() {
    std::vector<DType> t{DType::F32, DType::F16, DType::S32};
    if (device_->has(kCapFloat64)) t.push_back(DType::F64);
    return t;
  }
};

TEST_F(ReducePrologues, ThreeTensorsEveryGeometryAndType) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 41);
  for (const Case& c : kCases) three_tensors(d, OpId::sum, c, DType::F32, rng);
  for (DType t : types())
    for (const Case& c : sample_cases(std::vector<Case>(std::begin(kCases), std::end(kCases)), 3))
      for (OpId op : {OpId::sum, OpId::reduce_max, OpId::reduce_min})
        if (t != DType::F32 || op != OpId::sum) three_tensors(d, op, c, t, rng);
  three_tensors(d, OpId::product, kCases[3], DType::F32, rng);
  // The GPUs' plans: columns in one pass, shared by invocations a workgroup apart.
  ScopedTuning gpu("gpu_paths", "1");
  for (size_t i : {0, 1, 2}) three_tensors(d, OpId::sum, kCases[i], DType::F32, rng);
}

// equal(x, m) summed as u32 (Nx's grad of max counts ties so); and a transposed input, read
// through a copy.
TEST_F(ReducePrologues, ComparisonIntoU8AndTransposedInput) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 42);
  const Case& c = kCases[0];
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

TEST_F(ReducePrologues, CheckRefusesWhatItCannotFuse) {
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
  // Both a prologue and an epilogue; a logical reduction; more tensors than the prologue reads.
  ReduceAttrs both = a;
  both.epilogue = ElementwiseChain{{step(OpId::negate, DType::F32, {in(0)})}};
  EXPECT_FALSE(check_op(d, OpId::sum, {DType::F32, {4}}, two, Attrs::of(both)).native);
  EXPECT_FALSE(check_op(d, OpId::any, {DType::U8, {4}}, two, Attrs::of(a)).native);
  std::vector<TensorSpec> three{spec({4, 5}), spec({4, 1}), spec({4})};
  s = check_op(d, OpId::sum, {DType::F32, {4}}, three, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
}

// log-softmax's denominator, sum(exp(x - max(x))), and a cross-entropy's sum(logp * y) as graph
// nodes: each reduction takes its chain (one kernel fewer each) where the chain's result is not
// otherwise needed; the bits of the ops eagerly.
TEST_F(ReducePrologues, GraphFusesSoftmaxAndCrossEntropyRows) {
  Device& d = *device_;
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
