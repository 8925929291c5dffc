// Conv epilogues (ops/conv/conv_epilogue.hpp) and their graph fusion (graph/epilogue_fusion.hpp):
// a conv with an elementwise chain applied where it stores gives, bit for bit, the conv followed
// by the chain's ops run one by one through the same engine, on fresh random inputs: a bias
// along the feature axis + relu, a full-size residual (contiguous and transposed), a change of
// type (f32 then f16, a comparison into u8), on f32, f16 and s32; strides, padding, dilations,
// feature and batch groups, permuted layouts, 1 to 3 spatial axes, batch 1, 1x1 kernels, no
// channels, an empty batch, outputs straddling the tiles; NaN, infinities and signed zeros;
// lavapipe's tile and the GPUs' (gpu_paths); split-K forced (dot.splits: the
// chain in the final sum). A graph's conv, bias add and relu become one kernel.
#include <cmath>
#include <cstring>

#include "graph/graph.hpp"
#include "ops/conv/conv_attrs.hpp"
#include "ops/conv/conv_plan.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Canonical shapes (input [batch, channels, spatial...], kernel [filters, channels per group,
// spatial...]); a permutation says where canonical axis i is stored (empty: identity).
struct Case {
  const char* name;
  Shape input, kernel;
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> idil, kdil;
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_perm, ker_perm, out_perm;
};

const Case kCases[] = {
    {"2d strided, padded", {2, 3, 9, 9}, {8, 3, 3, 3}, {2, 1}, {{1, 1}, {0, 2}}, {}, {}, 1, 1, {}, {}, {}},
    {"2d channels last, HWIO, kernel dilation", {1, 4, 7, 6}, {16, 4, 3, 2}, {}, {}, {}, {2, 1}, 1, 1,
     {0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}},
    {"1d feature groups, input dilation", {3, 4, 11}, {6, 2, 3}, {}, {{2, 1}}, {2}, {}, 2, 1, {}, {}, {}},
    {"1x1 kernel, batch 1, tiles straddled", {1, 5, 6, 7}, {33, 5, 1, 1}, {}, {}, {}, {}, 1, 1, {}, {}, {}},
    {"batch groups", {4, 3, 5, 5}, {4, 3, 2, 2}, {}, {}, {}, {}, 1, 2, {}, {}, {}},
    {"3d, output permuted", {1, 2, 3, 4, 5}, {3, 2, 2, 2, 2}, {}, {}, {}, {}, 1, 1, {}, {}, {0, 4, 1, 2, 3}},
    {"no channels", {2, 0, 5}, {3, 0, 2}, {}, {}, {}, {}, 1, 1, {}, {}, {}},
    {"empty batch", {0, 3, 5, 5}, {4, 3, 2, 2}, {}, {}, {}, {}, 1, 1, {}, {}, {}},
};

// A case's operands and output shape.
struct Problem {
  ConvAttrs attrs;
  Tensor input, kernel;
  Shape out;
  int64_t feature_axis = 1;  // the output axis of the filters
};

Problem problem(Device& d, const Case& c, DType t, std::mt19937& rng) {
  Problem p;
  p.attrs = conv_attrs_of(c);
  p.input = random_tensor(d, t, stored_shape(c.input, p.attrs.input_permutation), rng);
  p.kernel = random_tensor(d, t, stored_shape(c.kernel, p.attrs.kernel_permutation), rng);
  ConvPlan plan = plan_conv(p.input.shape, p.kernel.shape, p.attrs);
  EXPECT_EQ(plan.error, "");
  p.out = conv_output_shape(plan.geometry, plan.attrs);
  p.feature_axis = p.attrs.output_permutation[1];
  return p;
}

// A bias along the output's feature axis, as Nx broadcasts it (trailing axes aligned): ones
// elsewhere, leading ones dropped.
Shape bias_shape(const Problem& p) {
  Shape s(p.out.size(), 1);
  s[size_t(p.feature_axis)] = p.out[size_t(p.feature_axis)];
  while (!s.empty() && s.front() == 1) s.erase(s.begin());
  return s;
}

// The conv, then each step as its own op.
Tensor unfused(Device& d, const Problem& p, DType product, const std::vector<Tensor>& extras,
               const ElementwiseChain& chain) {
  std::vector<Tensor> inputs{run_op(d, OpId::conv, {product, p.out}, {p.input, p.kernel}, Attrs::of(p.attrs))};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_steps_one_by_one(d, inputs, chain, p.out);
}

Tensor fused(Device& d, const Problem& p, DType product, const std::vector<Tensor>& extras,
             const ElementwiseChain& chain) {
  ConvAttrs a = p.attrs;
  a.epilogue = chain;
  a.product = product;
  std::vector<Tensor> inputs{p.input, p.kernel};
  inputs.insert(inputs.end(), extras.begin(), extras.end());
  return run_op(d, OpId::conv, {chain.steps.back().out, p.out}, inputs, Attrs::of(a));
}

// relu(conv + bias) on f32/f16/s32 and, with split-K forced, where the sum stores.
void bias_relu(Device& d, const Case& c, DType t, std::mt19937& rng) {
  SCOPED_TRACE(std::string(c.name) + ", " + std::string(dtype_name(t)));
  Problem p = problem(d, c, t, rng);
  ElementwiseChain chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
  std::vector<Tensor> extras{random_tensor(d, t, bias_shape(p), rng), scalar(d, t, 0)};
  Tensor want = unfused(d, p, t, extras, chain);
  Tensor got = fused(d, p, t, extras, chain);
  expect_same_bits(d, want, got);
  // Not all zeros: the relu keeps about half.
  if (t == DType::F32 && want.size() > 8) {
    auto w = to_host(d, want);
    size_t positive = 0;
    for (size_t i = 0; i < w.size(); i += 4) positive += typed_value_at(t, w.data() + i).real() > 0;
    if (p.kernel.size() > 0) EXPECT_GT(positive, 0u);
  }
}

}  // namespace

// Fused and unfused convs are compared bit for bit on one tier: without channels in multiples
// of 8 a fused f16 conv takes the SIMT kernel, an unfused one dot's cooperative-matrix GEMM
// (or on CPU drivers the system's BLAS), which round their sums differently; so those tiers
// stay off (TensorCoreTier turns the cooperative matrices on).
class ConvEpilogues : public DeviceTest {
 protected:
  ScopedTuning no_coopmat_{"dot.no_coopmat", "1"}, no_blas_{"host_blas", "0"};
};

TEST_F(ConvEpilogues, BiasReluGeometriesAndTypes) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 21);
  for (const Case& c : kCases) bias_relu(d, c, DType::F32, rng);
  // f16 and s32 on a sample of the geometries (each is its own kernel compile).
  for (DType t : {DType::F16, DType::S32})
    for (size_t i : {size_t(0), size_t(1), size_t(3)}) bias_relu(d, kCases[i], t, rng);
}

TEST_F(ConvEpilogues, SplitKAppliesTheChainInTheSum) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 22);
  {
    // The split is real: one launch more (the partial sums' sum).
    Problem p = problem(d, kCases[0], DType::F32, rng);
    Graph g;
    uint32_t x = g.input(DType::F32, p.input.shape), w = g.input(DType::F32, p.kernel.shape);
    g.output(g.add(OpId::conv, {DType::F32, p.out}, {x, w}, Attrs::of(p.attrs)));
    size_t whole = compile_graph(d, g, {p.input, p.kernel}).executable().launches().size();
    ScopedTuning splits("dot.splits", "3");
    EXPECT_EQ(compile_graph(d, g, {p.input, p.kernel}).executable().launches().size(), whole + 1);
  }
  ScopedTuning splits("dot.splits", "3");
  bias_relu(d, kCases[0], DType::F32, rng);
  bias_relu(d, kCases[2], DType::F32, rng);
  bias_relu(d, kCases[1], DType::S32, rng);
  bias_relu(d, kCases[1], DType::F16, rng);
}

// The tile kernel as GPUs run it (gpu_paths: their tile, vectors and layouts), and
// split-K there: the chain where the tile stores and in the final sum.
TEST_F(ConvEpilogues, GpuTiles) {
  Device& d = *device_;
  ScopedTuning gpu("gpu_paths", "1");
  std::mt19937 rng(sample_seed() + 26);
  bias_relu(d, kCases[0], DType::F32, rng);
  bias_relu(d, kCases[1], DType::F32, rng);
  ScopedTuning splits("dot.splits", "3");
  bias_relu(d, kCases[1], DType::F32, rng);
}

// Channels in multiples of 8, f16 and bf16: on GPUs with cooperative matrices the chain runs
// where the tensor-core GEMM that gathers the input stores (channels-first output: lanes
// along positions; channels-last: along filters), and with split-K in the final sum.
TEST_F(ConvEpilogues, TensorCoreTier) {
  Device& d = *device_;
  ScopedTuning coopmat("dot.no_coopmat", "0");
  std::mt19937 rng(sample_seed() + 27);
  const Case cases[] = {
      {"channels first, 16 channels", {2, 16, 9, 7}, {24, 16, 3, 3}, {}, {{1, 1}, {1, 1}}, {}, {}, 1, 1, {}, {}, {}},
      {"channels last, strided", {1, 8, 11, 6}, {40, 8, 3, 2}, {2, 1}, {{1, 0}, {0, 1}}, {}, {}, 1, 1, {0, 3, 1, 2},
       {3, 2, 0, 1}, {0, 3, 1, 2}},
  };
  for (DType t : {DType::F16, DType::BF16}) {
    ElementwiseChain probe{{step(OpId::add, t, {in(0), in(1)})}};
    for (const Case& c : cases) {
      Problem p = problem(d, c, t, rng);
      ConvAttrs a = p.attrs;
      a.epilogue = probe;
      a.product = t;
      TensorSpec specs[] = {contiguous_spec(t, p.input.shape), contiguous_spec(t, p.kernel.shape),
                            contiguous_spec(t, bias_shape(p))};
      if (!check_op(d, *find_op("conv"), {t, p.out}, specs, Attrs::of(a))) continue;
      bias_relu(d, c, t, rng);
      ScopedTuning splits("dot.splits", "3");
      bias_relu(d, c, t, rng);
    }
  }
}

// NaN, infinities and signed zeros in the input, kernel and bias: the same bits as the ops one
// by one (NaN against NaN).
TEST_F(ConvEpilogues, SpecialValues) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 25);
  DType t = DType::F32;
  Problem p = problem(d, kCases[0], t, rng);
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-42f, -1e30f};
  auto sprinkle = [&](const Tensor& x) {
    std::vector<float> v(size_t(x.size()));
    to_host(d, x, v.data(), v.size() * sizeof(float));
    for (size_t i = 0; i < v.size(); i += 7) v[i] = specials[(i / 7) % std::size(specials)];
    return from_host(d, t, x.shape, v.data(), v.size() * sizeof(float));
  };
  p.input = sprinkle(p.input);
  p.kernel = sprinkle(p.kernel);
  Tensor bias = sprinkle(random_tensor(d, t, bias_shape(p), rng));
  ElementwiseChain chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
  std::vector<Tensor> extras{bias, scalar(d, t, 0)};
  expect_same_bits(d, unfused(d, p, t, extras, chain), fused(d, p, t, extras, chain));
}

// Winograd's tier (conv_winograd.hpp, forced): the chain where its last pass stores, on
// channels-first and channels-last layouts, batch items in chunks (the output offsets the
// chain reads are the whole output's), f32 and f64; specials, a transposed residual and a
// change of type on the first.
TEST_F(ConvEpilogues, WinogradTier) {
  Device& d = *device_;
  ScopedTuning on("conv.winograd", "1"), budget("conv.winograd_budget", "16000");
  std::mt19937 rng(sample_seed() + 27);
  const Case cases[] = {
      {"3x3 same", {3, 5, 7, 6}, {9, 5, 3, 3}, {}, {{1, 1}, {1, 1}}, {}, {}, 1, 1, {}, {}, {}},
      {"3x3 channels last, HWIO", {2, 6, 5, 8}, {7, 6, 3, 3}, {}, {{0, 1}, {2, 1}}, {}, {}, 1, 1, {0, 3, 1, 2},
       {3, 2, 0, 1}, {0, 3, 1, 2}},
  };
  for (const Case& c : cases) {
    bias_relu(d, c, DType::F32, rng);
    if (d.has(kCapFloat64)) bias_relu(d, c, DType::F64, rng);
  }
  DType t = DType::F32;
  Problem p = problem(d, cases[0], t, rng);
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-42f, -1e30f};
  auto sprinkle = [&](const Tensor& x, size_t every) {
    std::vector<float> v(size_t(x.size()));
    to_host(d, x, v.data(), v.size() * sizeof(float));
    for (size_t i = 0; i < v.size(); i += every) v[i] = specials[(i / every) % std::size(specials)];
    return from_host(d, t, x.shape, v.data(), v.size() * sizeof(float));
  };
  Problem s = p;
  s.input = sprinkle(p.input, 29);
  s.kernel = sprinkle(p.kernel, 31);
  ElementwiseChain chain{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
  std::vector<Tensor> extras{sprinkle(random_tensor(d, t, bias_shape(s), rng), 3), scalar(d, t, 0)};
  expect_same_bits(d, unfused(d, s, t, extras, chain), fused(d, s, t, extras, chain));
  Shape swapped = p.out;
  std::swap(swapped[0], swapped[1]);
  std::vector<int64_t> perm = identity(p.out.size());
  std::swap(perm[0], perm[1]);
  Tensor transposed = transpose_view(random_tensor(d, t, swapped, rng), perm), half = scalar(d, t, 0.5);
  ElementwiseChain res{{step(OpId::add, t, {in(0), in(1)}), step(OpId::multiply, t, {st(0), in(2)})}};
  expect_same_bits(d, unfused(d, p, t, {transposed, half}, res), fused(d, p, t, {transposed, half}, res));
  Tensor bias = random_tensor(d, t, bias_shape(p), rng);
  ElementwiseChain narrow{{step(OpId::add, t, {in(0), in(1)}), step(OpId::as_type, DType::F16, {st(0)})}};
  expect_same_bits(d, unfused(d, p, t, {bias}, narrow), fused(d, p, t, {bias}, narrow));
}

// A full-size residual (contiguous, and stored transposed: strides across the output's axes),
// a product rounded to f16 after the bias, and a comparison into u8.
TEST_F(ConvEpilogues, ResidualsAndTypeChanges) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 23);
  DType t = DType::F32;
  for (const char* splits_env : {"", "2"}) {
    ScopedTuning splits("dot.splits", splits_env);
    for (size_t i : {size_t(0), size_t(1)}) {
      SCOPED_TRACE(std::string(kCases[i].name) + ", splits '" + splits_env + "'");
      Problem p = problem(d, kCases[i], t, rng);
      Tensor bias = random_tensor(d, t, bias_shape(p), rng), half = scalar(d, t, 0.5);
      Tensor residual = random_tensor(d, t, p.out, rng);
      // Stored with its first two axes swapped, handed over as the transposed view.
      Shape swapped = p.out;
      std::swap(swapped[0], swapped[1]);
      std::vector<int64_t> perm = identity(p.out.size());
      std::swap(perm[0], perm[1]);
      Tensor transposed = transpose_view(random_tensor(d, t, swapped, rng), perm);
      ElementwiseChain res{{step(OpId::add, t, {in(0), in(1)}), step(OpId::multiply, t, {st(0), in(2)})}};
      expect_same_bits(d, unfused(d, p, t, {residual, half}, res), fused(d, p, t, {residual, half}, res));
      expect_same_bits(d, unfused(d, p, t, {transposed, half}, res), fused(d, p, t, {transposed, half}, res));
      ElementwiseChain narrow{{step(OpId::add, t, {in(0), in(1)}), step(OpId::as_type, DType::F16, {st(0)})}};
      expect_same_bits(d, unfused(d, p, t, {bias}, narrow), fused(d, p, t, {bias}, narrow));
      ElementwiseChain compare{{step(OpId::greater, DType::U8, {in(0), in(1)})}};
      expect_same_bits(d, unfused(d, p, t, {residual}, compare), fused(d, p, t, {residual}, compare));
    }
  }
}

TEST_F(ConvEpilogues, CheckRefusesWhatItCannotFuse) {
  Device& d = *device_;
  ConvAttrs a = conv_attrs_of(kCases[0]);
  ConvAttrs plain = a;
  a.product = DType::F32;
  a.epilogue = ElementwiseChain{{step(OpId::add, DType::F32, {in(0), in(1)})}};
  TensorSpec x = contiguous_spec(DType::F32, {2, 3, 9, 9}), w = contiguous_spec(DType::F32, {8, 3, 3, 3});
  OutSpec out{DType::F32, {2, 8, 5, 9}};
  TensorSpec ok[] = {x, w, contiguous_spec(DType::F32, {8, 1, 1})};
  EXPECT_TRUE(check_op(d, OpId::conv, out, ok, Attrs::of(a)));
  TensorSpec bad_shape[] = {x, w, contiguous_spec(DType::F32, {8})};  // aligned with the last axis (9)
  Support s = check_op(d, OpId::conv, out, bad_shape, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::InvalidArgument);
  TensorSpec too_many[] = {x, w, ok[2], ok[2], ok[2], ok[2], ok[2]};  // five beside the product
  EXPECT_FALSE(check_op(d, OpId::conv, out, too_many, Attrs::of(a)));
  EXPECT_FALSE(check_op(d, OpId::conv, out, ok, Attrs::of(plain)));  // a third tensor needs an epilogue
  // The chain's type must be the output's.
  EXPECT_FALSE(check_op(d, OpId::conv, {DType::F16, out.shape}, ok, Attrs::of(a)));
  if (!d.has(kCapFloat64)) return;
  // exp computes in float through several roundings; an f64 tensor puts the f64 float controls
  // on the kernel: chain_rounding splits such a chain, so the epilogue refuses it.
  a.epilogue = ElementwiseChain{{step(OpId::exp, DType::F32, {in(0)}), step(OpId::add, DType::F64, {st(0), in(1)})}};
  TensorSpec f64_bias[] = {x, w, contiguous_spec(DType::F64, {8, 1, 1})};
  s = check_op(d, OpId::conv, {DType::F64, out.shape}, f64_bias, Attrs::of(a));
  EXPECT_FALSE(s.native);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported);
  EXPECT_NE(s.reason.find("float controls"), std::string::npos) << s.reason;
}

// conv -> add bias -> max 0 as graph nodes (and as one elementwise_chain node): one kernel
// where the unfused graph has three, with the bits of the unfused graph and of the ops run
// eagerly.
TEST_F(ConvEpilogues, GraphFusesBiasAndRelu) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 24);
  const Case& c = kCases[1];
  for (DType t : {DType::F32, DType::S32}) {
    SCOPED_TRACE(dtype_name(t));
    Problem p = problem(d, c, t, rng);
    Shape bs = bias_shape(p);
    std::vector<Tensor> inputs{p.input, p.kernel, random_tensor(d, t, bs, rng), scalar(d, t, 0)};
    auto build = [&](bool conv_is_output, bool as_chain) {
      Graph g;
      uint32_t x = g.input(t, p.input.shape), w = g.input(t, p.kernel.shape), bias = g.input(t, bs),
               zero = g.input(t, {});
      uint32_t y0 = g.add(OpId::conv, {t, p.out}, {x, w}, Attrs::of(p.attrs));
      if (as_chain) {
        ElementwiseChain c{{step(OpId::add, t, {in(0), in(1)}), step(OpId::max, t, {st(0), in(2)})}};
        g.output(g.add(OpId::elementwise_chain, {t, p.out}, {y0, bias, zero}, Attrs::of(c)));
      } else {
        uint32_t biased = g.add(OpId::add, {t, p.out}, {y0, bias});
        g.output(g.add(OpId::max, {t, p.out}, {biased, zero}));
      }
      if (conv_is_output) g.output(y0);
      return compile_graph(d, g, inputs);
    };
    Graph conv_only;
    conv_only.output(conv_only.add(OpId::conv, {t, p.out},
                                   {conv_only.input(t, p.input.shape), conv_only.input(t, p.kernel.shape)},
                                   Attrs::of(p.attrs)));
    size_t conv_launches = compile_graph(d, conv_only, {p.input, p.kernel}).executable().launches().size();
    GraphExecutable nodes = build(false, false), chain = build(false, true), separate = build(true, false);
    EXPECT_EQ(nodes.executable().launches().size(), conv_launches);
    EXPECT_EQ(chain.executable().launches().size(), conv_launches);
    EXPECT_EQ(separate.executable().launches().size(), conv_launches + 1);  // add and max: one chain
    Tensor want = separate.run(d, inputs)[0];
    expect_same_bits(d, want, nodes.run(d, inputs)[0]);
    expect_same_bits(d, want, chain.run(d, inputs)[0]);
    Tensor eager = run_op(d, OpId::max, {t, p.out},
                          {run_op(d, OpId::add, {t, p.out},
                                  {run_op(d, OpId::conv, {t, p.out}, {p.input, p.kernel}, Attrs::of(p.attrs)),
                                   inputs[2]},
                                  Attrs{}),
                           inputs[3]},
                          Attrs{});
    expect_same_bits(d, eager, want);
  }
}
