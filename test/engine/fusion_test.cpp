// Fused elementwise chains: random chains of 2-4 ops over inputs of every type (and
// intermediates of every type) give, bit for bit, what the same ops give run one by one; a
// chain runs step by step only for a reason chain_rounding states.
#include <bit>
#include <cstring>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

#include "ops/elementwise/fusion.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// Values of every kind a type holds: ordinary ones, extremes and, for floats, NaN, infinities,
// signed zeros and subnormals.
std::vector<std::byte> random_values(DType t, size_t n, std::mt19937& rng) {
  std::vector<std::byte> out(n * dtype_size(t));
  std::uniform_real_distribution<double> real(-8, 8);
  std::uniform_int_distribution<int> pick(0, 9);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0, 1e-40, 3e38,
                             -1e300, 0.5, 2.0};
  auto real_value = [&] { return pick(rng) < 2 ? specials[pick(rng)] : real(rng); };
  size_t parts = is_complex(t) ? 2 : 1;
  size_t part_bytes = dtype_size(t) / parts;
  for (size_t i = 0; i < n * parts; ++i) {
    std::byte* p = out.data() + i * part_bytes;
    if (!is_float(t) && !is_complex(t)) {
      uint64_t bits = pick(rng) < 3 ? uint64_t(rng()) << 32 | rng() : uint64_t(int64_t(real(rng) * 4));
      std::memcpy(p, &bits, part_bytes);  // little-endian: the low bytes
      continue;
    }
    double v = real_value();
    if (part_bytes == 8) {
      std::memcpy(p, &v, 8);
    } else if (part_bytes == 4) {
      float f = float(v);
      std::memcpy(p, &f, 4);
    } else if (t == DType::F16) {
      uint16_t h = f32_to_f16_bits(float(v));
      std::memcpy(p, &h, 2);
    } else if (t == DType::BF16) {
      uint16_t h = uint16_t(std::bit_cast<uint32_t>(float(v)) >> 16);
      std::memcpy(p, &h, 2);
    } else if (t == DType::F8) {
      uint8_t b = uint8_t(f32_to_f16_bits(float(v)) >> 8);  // e5m2: the top byte of an f16
      std::memcpy(p, &b, 1);
    } else {
      uint8_t b = uint8_t(rng());
      std::memcpy(p, &b, 1);
    }
  }
  return out;
}

std::vector<OpId> chain_candidates() {
  std::vector<OpId> ops;
  for (const OpInfo& row : op_table())
    if (row.family == FamilyId::elementwise && row.id != OpId::bitcast && row.id != OpId::elementwise_chain)
      ops.push_back(row.id);
  return ops;
}

// A random chain of `length` steps over `in`: each step takes the previous step's result and
// inputs or earlier results, with an output type Nx gives that op (any, for as_type). as_type
// and comparisons (u8 results) come up more often than their share of the op table, and a
// step's type is its operand's only half the time, so that intermediates of every type meet
// ops of every kind.
ElementwiseChain random_chain(Device& dev, const std::vector<DType>& in, size_t length, int64_t n, std::mt19937& rng) {
  static const std::vector<OpId> ops = chain_candidates();
  ElementwiseChain chain;
  while (chain.steps.size() < length) {
    size_t s = chain.steps.size();
    static const OpId compares[] = {OpId::equal, OpId::not_equal, OpId::greater, OpId::less, OpId::greater_equal,
                                    OpId::less_equal};
    int kind = int(rng() % 8);
    OpId op = kind == 0 ? OpId::as_type : kind == 1 ? compares[rng() % 6] : ops[rng() % ops.size()];
    int arity = op == OpId::as_type ? 1 : op_info(op).arity;
    std::vector<ChainOperand> operands;
    std::vector<DType> types;
    for (int k = 0; k < arity; ++k) {
      bool previous = s > 0 && (k == 0 || rng() % 3 == 0);
      ChainOperand o = previous ? ChainOperand{ChainOperand::From::Step, uint32_t(s - 1)}
                                : ChainOperand{ChainOperand::From::Input, uint32_t(rng() % in.size())};
      if (previous && s > 1 && rng() % 4 == 0) o.index = uint32_t(rng() % s);  // an earlier step
      operands.push_back(o);
      types.push_back(o.from == ChainOperand::From::Input ? in[o.index] : chain.steps[o.index].out);
    }
    if (s > 0 && rng() % 2) std::swap(operands.front(), operands.back()), std::swap(types.front(), types.back());
    std::vector<DType> outs;
    for (DType out : kAllDTypes)
      if (supports_op(dev, op_info(op).name, {out, {n}}, types)) outs.push_back(out);
    if (outs.empty()) continue;
    DType out = outs[rng() % outs.size()];
    if (std::find(outs.begin(), outs.end(), types[0]) != outs.end() && rng() % 2) out = types[0];
    chain.steps.push_back({op, out, operands});
  }
  return chain;
}

std::string describe(const ElementwiseChain& chain, const std::vector<DType>& in) {
  std::ostringstream s;
  s << "inputs";
  for (DType t : in) s << " " << dtype_name(t);
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    const auto& st = chain.steps[i];
    s << "; t" << i << " = " << op_info(st.op).name << "(";
    for (size_t k = 0; k < st.operands.size(); ++k)
      s << (k ? ", " : "") << (st.operands[k].from == ChainOperand::From::Input ? "in" : "t") << st.operands[k].index;
    s << ") : " << dtype_name(st.out);
  }
  return s.str();
}

// Bit for bit; NaNs need only both be NaN (IEEE leaves the sign and payload of a NaN an
// operation makes to the implementation, and a compiler may fold one in one kernel only).
// Distance in units in the last place, 0 for two NaNs.
uint64_t ulps_apart(DType part, const std::byte* a, const std::byte* b) {
  size_t size = dtype_size(part);
  uint64_t ua = 0, ub = 0;
  std::memcpy(&ua, a, size);
  std::memcpy(&ub, b, size);
  const uint64_t sign = uint64_t(1) << (size * 8 - 1);
  auto is_nan = [&](uint64_t v) {
    switch (part) {
      case DType::F64: return std::isnan(std::bit_cast<double>(v));
      case DType::F32: return std::isnan(std::bit_cast<float>(uint32_t(v)));
      case DType::F16: return (v & 0x7c00) == 0x7c00 && (v & 0x3ff) != 0;
      case DType::BF16: return (v & 0x7f80) == 0x7f80 && (v & 0x7f) != 0;
      case DType::F8: return (v & 0x7c) == 0x7c && (v & 0x3) != 0;
      default: return (v & 0x7f) == 0x7f;  // f8e4m3fn
    }
  };
  if (is_nan(ua) || is_nan(ub)) return is_nan(ua) && is_nan(ub) ? 0 : UINT64_MAX;
  // Sign-magnitude to a monotonic key.
  auto key = [&](uint64_t v) { return (v & sign) ? sign - (v & (sign - 1)) : sign + v; };
  uint64_t ka = key(ua), kb = key(ub);
  return ka > kb ? ka - kb : kb - ka;
}

bool same_value(DType t, const std::byte* a, const std::byte* b) {
  size_t size = dtype_size(t);
  if (std::memcmp(a, b, size) == 0) return true;
  if (!is_float(t) && !is_complex(t)) return false;
  DType part = t == DType::C64 ? DType::F32 : t == DType::C128 ? DType::F64 : t;
  size_t parts = part == t ? 1 : 2, part_size = size / parts;
  for (size_t k = 0; k < parts; ++k)
    if (ulps_apart(part, a + k * part_size, b + k * part_size) != 0) return false;
  return true;
}

// The chain's steps run one by one, each result an operand of the later ones.
std::vector<Tensor> one_by_one(Device& dev, const ElementwiseChain& chain, const std::vector<Tensor>& inputs,
                               const Shape& shape) {
  std::vector<Tensor> steps;
  for (const ChainStep& st : chain.steps) {
    std::vector<Tensor> operands;
    for (const auto& o : st.operands)
      operands.push_back(o.from == ChainOperand::From::Input ? inputs[o.index] : steps[o.index]);
    steps.push_back(run_op(dev, st.op, {st.out, shape}, operands));
  }
  return steps;
}

std::string hex(const std::vector<std::byte>& b, size_t at, size_t bytes) {
  std::ostringstream h;
  for (size_t k = bytes; k-- > 0;) h << std::hex << std::setw(2) << std::setfill('0') << int(b[at * bytes + k]);
  return h.str();
}

// Runs the chain as the op elementwise_chain and one by one; a failure names the first
// differing element and, for each step, what its prefix chain gives there.
void expect_same_as_one_by_one(Device& dev, const ElementwiseChain& chain, const std::vector<DType>& in,
                               const std::vector<Tensor>& inputs, const Shape& shape) {
  std::vector<Tensor> steps = one_by_one(dev, chain, inputs, shape);
  DType out = chain.steps.back().out;
  Tensor fused = run_op(dev, OpId::elementwise_chain, {out, shape}, inputs, Attrs::of(chain));
  auto want = to_host(dev, steps.back()), got = to_host(dev, fused);
  ASSERT_EQ(got.size(), want.size());
  size_t size = dtype_size(out);
  for (int64_t i = 0; i < shape[0]; ++i) {
    if (same_value(out, got.data() + i * size, want.data() + i * size)) continue;
    std::ostringstream operands, prefixes;
    for (size_t k = 0; k < inputs.size(); ++k)
      operands << " 0x" << hex(to_host(dev, inputs[k]), inputs[k].size() == 1 ? 0 : size_t(i), dtype_size(in[k]));
    for (size_t k = 0; k < chain.steps.size(); ++k) {
      ElementwiseChain prefix{{chain.steps.begin(), chain.steps.begin() + k + 1}};
      DType pt = prefix.steps.back().out;
      auto p = to_host(dev, run_op(dev, OpId::elementwise_chain, {pt, shape}, inputs, Attrs::of(prefix)));
      auto w = to_host(dev, steps[k]);
      prefixes << "\n  t" << k << ": fused 0x" << hex(p, size_t(i), dtype_size(pt)) << ", one by one 0x"
               << hex(w, size_t(i), dtype_size(pt));
    }
    ADD_FAILURE() << describe(chain, in) << ": element " << i << " (inputs" << operands.str() << ") is 0x"
                  << hex(got, size_t(i), size) << ", one by one 0x" << hex(want, size_t(i), size) << prefixes.str();
    return;
  }
}

// Whether the chain's kernel would use f64: an f64/c128 input, or a step whose own kernel does.
bool kernel_uses_f64(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64) {
  for (DType t : in)
    if (t == DType::F64 || t == DType::C128) return true;
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    std::vector<DType> types;
    for (const auto& o : chain.steps[s].operands)
      types.push_back(o.from == ChainOperand::From::Input ? in[o.index] : chain.steps[o.index].out);
    if (uses_f64(scalar_expr(chain.steps[s].op, chain.steps[s].out, types, has_f64))) return true;
  }
  return false;
}

}  // namespace

TEST(Fusion, ChainsOfTwoToFourOpsMatchTheOpsOneByOneBitForBitForEveryType) {
  auto dev = shared_device();
  std::mt19937 rng(sample_seed());
  const Shape shape{1031};  // not a multiple of 4: GPU loops run their four-wide trips and the tail
  const int64_t n = shape[0];
  const bool has_f64 = dev->has(kCapFloat64);
  std::vector<DType> types;
  for (DType t : kAllDTypes)
    if (supports_op(*dev, "add", {t, shape}, {t, t})) types.push_back(t);  // else the device lacks the type
  // Chains per type, of 2 to 4 steps over one to three inputs, the first of that type and the
  // others of it or of any type: each chain compiles up to five kernels (32 chains: about a
  // minute with validation and a cold kernel cache on a loaded 2-core lavapipe machine, 20 s
  // with a warm one). A different sample each run; NXV_TEST_EXHAUSTIVE=1 runs 24 per type.
  const int per_type = exhaustive_tests() ? 24 : 2;
  int fused = 0, split = 0;
  std::map<std::string, int> typings;  // intermediate type pairs met, for the log
  for (DType t : types) {
    for (int c = 0; c < per_type; ++c) {
      std::vector<DType> in(1 + rng() % 3, t);
      for (size_t i = 1; i < in.size(); ++i)
        if (rng() % 2) in[i] = types[rng() % types.size()];
      ElementwiseChain chain = random_chain(*dev, in, 2 + rng() % 3, n, rng);
      SCOPED_TRACE(describe(chain, in));
      // A chain runs as one kernel unless chain_rounding names a stated reason, which must hold.
      ChainRounding r = chain_rounding(chain, in, has_f64);
      switch (r.reason) {
        case ChainSplit::None:
          ++fused;
          break;
        case ChainSplit::FloatMathUnderF64Controls: {
          ++split;
          const ChainStep& st = chain.steps.at(r.step);
          std::vector<DType> operand_types;
          for (const auto& o : st.operands)
            operand_types.push_back(o.from == ChainOperand::From::Input ? in[o.index] : chain.steps[o.index].out);
          ScalarExpr e = scalar_expr(st.op, st.out, operand_types, has_f64);
          EXPECT_TRUE(kernel_uses_f64(chain, in, has_f64));
          EXPECT_FALSE(uses_f64(e));
          EXPECT_TRUE(several_float_roundings(st.op, e));
          EXPECT_TRUE(e.compute == "float" || e.compute == "vec2") << e.compute;
          break;
        }
        default:
          ADD_FAILURE() << "a split for no stated reason: " << r.message;
      }
      for (size_t s = 0; s + 1 < chain.steps.size(); ++s)
        ++typings[std::string(dtype_name(chain.steps[s].out))];
      std::vector<Tensor> inputs;
      for (size_t i = 0; i < in.size(); ++i) {
        // One input in three is a broadcast scalar.
        Shape sh = i > 0 && rng() % 3 == 0 ? Shape{1} : shape;
        auto bytes = random_values(in[i], size_t(sh[0]), rng);
        inputs.push_back(from_host(*dev, in[i], sh, bytes.data(), bytes.size()));
      }
      expect_same_as_one_by_one(*dev, chain, in, inputs, shape);
    }
  }
  std::printf("%d chains fused, %d run step by step; intermediates:", fused, split);
  for (const auto& [name, count] : typings) std::printf(" %s %d", name.c_str(), count);
  std::printf("\n");
  // Most chains fuse: splitting is the exception a stated reason makes (about one chain in
  // seven over the exhaustive sweep; a sample of 32 saw up to 10 split, so 3:1 failed ~5% of
  // runs).
  EXPECT_GE(fused, split);
}

// The kinds of mismatch random chains found, pinned down.
TEST(Fusion, IntermediatesRoundAsInTheirOwnKernels) {
  auto dev = shared_device();
  const bool has_f64 = dev->has(kCapFloat64);
  using From = ChainOperand::From;
  // An f16 intermediate: compilers fold f32 -> f16 -> f32 inside one kernel.
  {
    std::vector<float> x = {1 + std::ldexp(1.0f, -11), 1e10f, 65519.0f, 65520.0f, 1e-8f, -3e-5f, NAN, -INFINITY};
    Tensor in = upload(*dev, DType::F32, {8}, x);
    ElementwiseChain chain{{{OpId::as_type, DType::F16, {{From::Input, 0}}},
                            {OpId::multiply, DType::F32, {{From::Step, 0}, {From::Input, 0}}}}};
    expect_same_as_one_by_one(*dev, chain, {DType::F32}, {in}, {8});
    ASSERT_EQ(chain_rounding(chain, {DType::F32}, has_f64).reason, ChainSplit::None);
  }
  if (has_f64 && supports_op(*dev, "as_type", {DType::F16, {2}}, {DType::F64})) {
    // From double arithmetic: 1 + 2^-11 + 2^-30 rounds to f32's 1 + 2^-11, then to f16's 1;
    // 1e10 overflows f16.
    std::vector<double> x = {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30), 1e10};
    Tensor in = upload(*dev, DType::F64, {2}, x);
    ElementwiseChain chain{{{OpId::as_type, DType::F16, {{From::Input, 0}}},
                            {OpId::as_type, DType::F32, {{From::Step, 0}}}}};
    expect_same_as_one_by_one(*dev, chain, {DType::F64}, {in}, {2});
    auto got = download<float>(*dev, run_op(*dev, OpId::elementwise_chain, {DType::F32, {2}}, {in}, Attrs::of(chain)));
    EXPECT_EQ(got[1], INFINITY);
    // The same through rsqrt (computed in double) and a cast: an f16 infinity is s32's maximum.
    ElementwiseChain cast{{{OpId::rsqrt, DType::F16, {{From::Input, 0}}},
                           {OpId::as_type, DType::S32, {{From::Step, 0}}}}};
    Tensor tiny = upload(*dev, DType::F64, {2}, std::vector<double>{1e-40, 4.0});
    expect_same_as_one_by_one(*dev, cast, {DType::F64}, {tiny}, {2});
  }
  // Float math whose own kernel has no f64 runs apart from a chain whose kernel has it
  // (lavapipe gave asinh 1 ulp apart there); exact float steps join.
  ElementwiseChain math{{{OpId::as_type, DType::F32, {{From::Input, 0}}}, {OpId::asinh, DType::F32, {{From::Step, 0}}}}};
  ElementwiseChain exact{{{OpId::as_type, DType::F32, {{From::Input, 0}}},
                          {OpId::multiply, DType::F32, {{From::Step, 0}, {From::Step, 0}}}}};
  if (has_f64) {
    EXPECT_EQ(chain_rounding(math, {DType::F64}, true).reason, ChainSplit::FloatMathUnderF64Controls);
    std::vector<double> x = {0.1, 1e-3, 7.5, -2.25};
    Tensor in = upload(*dev, DType::F64, {4}, x);
    expect_same_as_one_by_one(*dev, math, {DType::F64}, {in}, {4});  // run step by step
  }
  EXPECT_EQ(chain_rounding(math, {DType::F32}, true).reason, ChainSplit::None);
  EXPECT_EQ(chain_rounding(exact, {DType::F64}, true).reason, ChainSplit::None);
  // as_type into the operand's own type is a view run alone: its bits pass through a chain
  // unrounded, in the middle and at the end (Nx's f8 codes 0x01-0x03 read as values that
  // store back as other codes), fused and run step by step.
  if (supports_op(*dev, "negate", {DType::F8, {256}}, {DType::F8})) {
    std::vector<uint8_t> codes(256);
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = uint8_t(i);
    Tensor in = upload(*dev, DType::F8, {256}, codes);
    ElementwiseChain middle{{{OpId::abs, DType::F8, {{From::Input, 0}}},
                             {OpId::as_type, DType::F8, {{From::Step, 0}}},
                             {OpId::negate, DType::F8, {{From::Step, 1}}}}};
    ElementwiseChain end{{{OpId::negate, DType::F8, {{From::Input, 0}}}, {OpId::as_type, DType::F8, {{From::Step, 0}}}}};
    expect_same_as_one_by_one(*dev, middle, {DType::F8}, {in}, {256});
    expect_same_as_one_by_one(*dev, end, {DType::F8}, {in}, {256});
  }
  if (has_f64) {
    ElementwiseChain split{{{OpId::as_type, DType::F32, {{From::Input, 0}}},
                            {OpId::asinh, DType::F32, {{From::Step, 0}}},
                            {OpId::as_type, DType::F32, {{From::Step, 1}}}}};
    EXPECT_EQ(chain_rounding(split, {DType::F64}, true).reason, ChainSplit::FloatMathUnderF64Controls);
    Tensor in = upload(*dev, DType::F64, {4}, std::vector<double>{0.1, 1e-3, 7.5, -2.25});
    expect_same_as_one_by_one(*dev, split, {DType::F64}, {in}, {4});
  }
}

TEST(Fusion, ABadChainIsAClearError) {
  auto dev = shared_device();
  auto x = empty(*dev, DType::F32, {4});
  ElementwiseChain forward_ref{{{OpId::exp, DType::F32, {{ChainOperand::From::Step, 0}}}}};
  try {
    run_op(*dev, OpId::elementwise_chain, {DType::F32, {4}}, {x}, Attrs::of(forward_ref));
    FAIL() << "a step naming itself ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("a step not before it"), std::string::npos) << e.what();
  }
  ElementwiseChain wrong_type{{{OpId::exp, DType::F64, {{ChainOperand::From::Input, 0}}}}};
  EXPECT_THROW(run_op(*dev, OpId::elementwise_chain, {DType::F32, {4}}, {x}, Attrs::of(wrong_type)), Error);
  EXPECT_THROW(run_op(*dev, OpId::elementwise_chain, {DType::F32, {4}}, {x}), Error);
}

TEST(Fusion, WithoutF64AChainIsRefusedWhereOneOfItsStepsWouldBe) {
  auto dev = Device::open({.disabled = kCapFloat64 | kCapInt64});
  using From = ChainOperand::From;
  // sin of a 32-bit integer needs double precision: alone it is refused, and so in a chain.
  ElementwiseChain needs_f64{{{OpId::add, DType::S32, {{From::Input, 0}, {From::Input, 0}}},
                              {OpId::sin, DType::F32, {{From::Step, 0}}}}};
  ASSERT_FALSE(supports_op(*dev, "sin", {DType::F32, {4}}, {DType::S32}));
  auto ints = upload(*dev, DType::S32, {4}, std::vector<int32_t>{1, 2, 1 << 24, -(1 << 30)});
  try {
    run_op(*dev, OpId::elementwise_chain, {DType::F32, {4}}, {ints}, Attrs::of(needs_f64));
    FAIL() << "a chain with a step that needs f64 ran without it";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("step 1"), std::string::npos) << e.what();
  }
  // The same chain over f32 runs, fused, and matches the ops one by one.
  ElementwiseChain in_float{{{OpId::add, DType::F32, {{From::Input, 0}, {From::Input, 0}}},
                             {OpId::sin, DType::F32, {{From::Step, 0}}}}};
  auto floats = upload(*dev, DType::F32, {4}, std::vector<float>{1, 2, 3e7f, -1e-3f});
  expect_same_as_one_by_one(*dev, in_float, {DType::F32}, {floats}, {4});
}
