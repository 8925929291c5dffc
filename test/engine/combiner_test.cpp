// reduce and window_reduce with a combiner (a traced function, ops/reduce/combiner.hpp) on
// fresh random inputs against host folds: reduce over layouts that take each path (rows
// shared by many invocations, columns, two passes, transposed views, an empty axis) with
// functions whose result is independent of the fold's order (integer wrap-around, bitwise
// ops, a + b + 1: every tree over n values makes n - 1 combines), compared bit for bit;
// window_reduce, which folds each window in Nx's order, also with a function that is not
// associative (a * b + 1).
#include <bit>
#include <cstring>
#include <functional>

#include "kernels/glsl_emissions.hpp"
#include "ops/reduce/combiner.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/window/window_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

class Combiners : public DeviceTest {};

struct Fn {
  std::string program;  // the option "combiner" over s32
  std::function<int32_t(int32_t, int32_t)> host;
};

int32_t wrap(int64_t v) { return int32_t(uint32_t(uint64_t(v))); }

std::vector<Fn> order_free_functions() {
  return {
      {"add s32 x acc", [](int32_t x, int32_t a) { return wrap(int64_t(x) + a); }},
      {"multiply s32 x acc", [](int32_t x, int32_t a) { return wrap(int64_t(x) * a); }},
      // a + b + 1, its constant spelled as Nx stores it
      {"add s32 x acc;add s32 s0 s32#01000000", [](int32_t x, int32_t a) { return wrap(int64_t(x) + a + 1); }},
      {"bitwise_xor s32 x acc", [](int32_t x, int32_t a) { return x ^ a; }},
      {"max s32 x acc", [](int32_t x, int32_t a) { return std::max(x, a); }},
      // max(x, acc) through a comparison and a select
      {"greater u8 x acc;select s32 s0 x acc", [](int32_t x, int32_t a) { return x > a ? x : a; }},
  };
}

struct Layout {
  std::string name;
  Shape shape;
  std::vector<int64_t> axes;  // empty: every axis
  bool transposed = false;    // the op sees the transpose of a stored {shape reversed} tensor
};

// The host fold of the row through `f` from `acc`, in Nx's order.
int32_t fold(const std::vector<int32_t>& row, int32_t acc, const Fn& f) {
  for (int32_t v : row) acc = f.host(v, acc);
  return acc;
}

TEST_F(Combiners, ReduceMatchesTheHostFoldForOrderFreeFunctions) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed());
  std::uniform_int_distribution<int32_t> value(-50, 50);
  std::vector<Layout> layouts = {
      {"all_257", {257}, {}},           {"rows_3x4100", {3, 4100}, {1}},  {"columns_300x5", {300, 5}, {0}},
      {"all_70000_two_passes", {70000}, {}}, {"apart_2x3x4_axes_0_2", {2, 3, 4}, {0, 2}},
      {"transposed_40x6", {40, 6}, {1}, true}, {"empty_axis_5x0x3", {5, 0, 3}, {1}}, {"scalar", {}, {}},
  };
  std::string failures;
  for (const Fn& f : order_free_functions()) {
    auto combiner = std::make_shared<const Combiner>(parse_combiner(f.program));
    for (const Layout& l : layouts) {
      int64_t n = shape_size(l.shape);
      std::vector<int32_t> x(static_cast<size_t>(n));
      bool product = f.program.rfind("multiply", 0) == 0;
      for (auto& v : x) v = product ? (value(rng) > 0 ? 1 : -1) * (value(rng) % 3 == 0 ? 3 : 1) : value(rng);
      int32_t acc = value(rng);
      ReduceAttrs attrs;
      attrs.all_axes = l.axes.empty();
      attrs.axes = l.axes;
      attrs.combiner = combiner;
      std::vector<bool> reduced(l.shape.size(), l.axes.empty());
      for (int64_t a : l.axes) reduced[size_t(a)] = true;
      Shape out;
      for (size_t a = 0; a < l.shape.size(); ++a)
        if (!reduced[a]) out.push_back(l.shape[a]);
      // Rows of the reduced elements in Nx's (row-major) order, per output element.
      std::vector<std::vector<int32_t>> rows(size_t(shape_size(out)));
      for (int64_t i = 0; i < n; ++i) {
        auto c = coords(i, l.shape);
        std::vector<int64_t> oc;
        for (size_t a = 0; a < c.size(); ++a)
          if (!reduced[a]) oc.push_back(c[a]);
        rows[size_t(linear(oc, out))].push_back(x[size_t(i)]);
      }
      Tensor input;
      if (l.transposed) {
        std::vector<int32_t> t(x.size());
        for (int64_t i = 0; i < l.shape[0]; ++i)
          for (int64_t j = 0; j < l.shape[1]; ++j) t[size_t(j * l.shape[0] + i)] = x[size_t(i * l.shape[1] + j)];
        input = transpose_view(upload(d, DType::S32, {l.shape[1], l.shape[0]}, t), {1, 0});
      } else {
        input = upload(d, DType::S32, l.shape, x);
      }
      Tensor init = upload(d, DType::S32, {}, std::vector<int32_t>{acc});
      std::vector<int32_t> got;
      try {
        got = download<int32_t>(d, run_op(d, OpId::reduce, {DType::S32, out}, {input, init}, Attrs::of(attrs)));
      } catch (const std::exception& e) {
        failures += l.name + " [" + f.program + "]: threw " + e.what() + "\n";
        continue;
      }
      size_t bad = 0;
      for (size_t r = 0; r < rows.size(); ++r)
        if (got[r] != fold(rows[r], acc, f)) ++bad;
      if (bad) failures += l.name + " [" + f.program + "]: " + std::to_string(bad) + " of " + std::to_string(rows.size()) + " differ\n";
    }
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

// Float, u8 and s64 typings of one function each: f32 sums of small integers are exact;
// u8 products wrap; an f16 constant goes through its register form.
TEST_F(Combiners, ReduceTypesAndConstants) {
  Device& d = *device_;
  {
    std::vector<float> x(4100);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6);
    ReduceAttrs attrs;
    attrs.combiner = std::make_shared<const Combiner>(parse_combiner("multiply f32 x f32#0000803f;add f32 s0 acc"));
    float got = download<float>(d, run_op(d, OpId::reduce, {DType::F32, {}},
                                          {upload(d, DType::F32, {4100}, x), upload(d, DType::F32, {}, std::vector<float>{0.5f})},
                                          Attrs::of(attrs)))[0];
    double want = 0.5;
    for (float v : x) want += v;
    EXPECT_EQ(got, float(want));
  }
  {
    std::vector<uint8_t> x(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = uint8_t(3 + 2 * (i % 7));
    ReduceAttrs attrs;
    attrs.combiner = std::make_shared<const Combiner>(parse_combiner("multiply u8 x acc"));
    uint8_t got = download<uint8_t>(d, run_op(d, OpId::reduce, {DType::U8, {}},
                                              {upload(d, DType::U8, {1000}, x), upload(d, DType::U8, {}, std::vector<uint8_t>{1})},
                                              Attrs::of(attrs)))[0];
    uint8_t want = 1;
    for (uint8_t v : x) want = uint8_t(want * v);
    EXPECT_EQ(got, want);
  }
  {
    std::vector<int64_t> x(3000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (int64_t(i) << 33) - 5;
    ReduceAttrs attrs;
    attrs.combiner = std::make_shared<const Combiner>(parse_combiner("add s64 x acc"));
    if (d.has(kCapInt64)) {
      int64_t got = download<int64_t>(d, run_op(d, OpId::reduce, {DType::S64, {}},
                                                {upload(d, DType::S64, {3000}, x), upload(d, DType::S64, {}, std::vector<int64_t>{7})},
                                                Attrs::of(attrs)))[0];
      int64_t want = 7;
      for (int64_t v : x) want += v;
      EXPECT_EQ(got, want);
    }
  }
  {
    // f16: x + acc * 1.5 (f16 constant 0x3e00), two values: 2 + 4 * 1.5 = 8 from acc = 4
    ReduceAttrs attrs;
    attrs.combiner =
        std::make_shared<const Combiner>(parse_combiner("multiply f16 acc f16#003e;add f16 x s0"));
    std::vector<uint16_t> x{f32_to_f16_bits(2.0f)};
    uint16_t got = download<uint16_t>(d, run_op(d, OpId::reduce, {DType::F16, {}},
                                                {upload(d, DType::F16, {1}, x),
                                                 upload(d, DType::F16, {}, std::vector<uint16_t>{f32_to_f16_bits(4.0f)})},
                                                Attrs::of(attrs)))[0];
    EXPECT_EQ(f16_bits_to_f32(got), 8.0f);
  }
}

TEST_F(Combiners, CheckSaysWhyNot) {
  Device& d = *device_;
  ReduceAttrs attrs;
  attrs.combiner = std::make_shared<const Combiner>(parse_combiner("quotient f32 x acc"));
  std::vector<TensorSpec> in{contiguous_spec(DType::F32, {4}), contiguous_spec(DType::F32, {})};
  Support s = check_op(d, OpId::reduce, {DType::F32, {}}, in, Attrs::of(attrs));
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("quotient"), std::string::npos) << s.reason;
  EXPECT_THROW(parse_combiner("add s32 x nope"), Error);
  EXPECT_THROW(parse_combiner("add s32 x s3"), Error);
  EXPECT_THROW(parse_combiner("add s32 x s32#0100"), Error);
}

// An eager reduce/5 or window_reduce whose kernel is cached emits no GLSL: its kernel is found
// by its variant and the function's text, and the function's code is emitted once per text and
// type. Another function (or type) emits its code, once.
TEST_F(Combiners, ACachedKernelEmitsNoGlsl) {
  Device& d = *device_;
  std::vector<int32_t> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = int32_t(i % 7) - 3;
  Tensor input = upload(d, DType::S32, {300}, x), init = upload(d, DType::S32, {}, std::vector<int32_t>{1});
  auto reduce_with = [&](const std::string& program) {
    ReduceAttrs attrs;
    attrs.combiner = std::make_shared<const Combiner>(parse_combiner(program));  // parsed again, as each call decodes it
    return download<int32_t>(d, run_op(d, OpId::reduce, {DType::S32, {}}, {input, init}, Attrs::of(attrs)))[0];
  };
  auto window_with = [&](const std::string& program) {
    WindowAttrs w{{3}, {1}, {1}, {{1, 1}}};
    w.combiner = std::make_shared<const Combiner>(parse_combiner(program));
    return download<int32_t>(d, run_op(d, OpId::window_reduce, {DType::S32, {300}}, {input, init}, Attrs::of(w)));
  };
  const std::string program = "add s32 x acc;add s32 s0 s32#02000000";  // a + b + 2
  int32_t first = reduce_with(program);
  std::vector<int32_t> first_windows = window_with(program);
  uint64_t before = glsl_emissions();
  EXPECT_EQ(reduce_with(program), first);
  EXPECT_EQ(window_with(program), first_windows);
  EXPECT_EQ(glsl_emissions(), before);
  // 301 values (the elements and the accumulator) take 300 combines in any tree, each adding 2.
  int64_t sum = 1;
  for (int32_t v : x) sum += v + 2;
  EXPECT_EQ(first, int32_t(sum));
  reduce_with("add s32 x acc;add s32 s0 s32#03000000");
  EXPECT_EQ(glsl_emissions(), before + 1);
}

// window_reduce folds each window as Nx does (row-major, from the accumulator, padding holding
// the accumulator): any function matches, a * b + 1 too.
TEST_F(Combiners, WindowReduceFoldsInNxOrder) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed());
  std::uniform_int_distribution<int32_t> value(-4, 4);
  using P = std::vector<std::pair<int64_t, int64_t>>;
  struct Case {
    std::string name;
    Shape shape;
    WindowAttrs w;
  };
  std::vector<Case> cases = {
      {"pool_3x3_same", {2, 9, 11}, {{1, 3, 3}, {1, 1, 1}, {1, 1, 1}, P{{0, 0}, {1, 1}, {1, 1}}}},
      {"dilated_negative_padding", {5, 13}, {{2, 3}, {2, 1}, {2, 2}, P{{1, -1}, {-2, 3}}}},
      {"stride_2", {3, 8, 6}, {{1, 2, 2}, {1, 2, 2}, {1, 1, 1}, P{{0, 0}, {0, 0}, {0, 0}}}},
      {"long_1d_window_looped", {300}, {{70}, {3}, {1}, P{{5, 5}}}},
  };
  std::vector<Fn> fns = {
      {"multiply s32 x acc;add s32 s0 s32#01000000", [](int32_t x, int32_t a) { return wrap(int64_t(x) * a + 1); }},
      {"subtract s32 x acc", [](int32_t x, int32_t a) { return wrap(int64_t(x) - a); }},
      {"max s32 x acc", [](int32_t x, int32_t a) { return std::max(x, a); }},
  };
  std::string failures;
  for (const Fn& f : fns) {
    for (const Case& c : cases) {
      std::vector<int32_t> x(size_t(shape_size(c.shape)));
      for (auto& v : x) v = value(rng);
      int32_t acc = value(rng);
      WindowAttrs w = c.w;
      w.combiner = std::make_shared<const Combiner>(parse_combiner(f.program));
      Shape out;
      for (size_t a = 0; a < c.shape.size(); ++a) {
        int64_t padded = c.shape[a] + w.padding[a].first + w.padding[a].second, span = (w.dims[a] - 1) * w.dilations[a] + 1;
        out.push_back(padded < span ? 0 : (padded - span) / w.strides[a] + 1);
      }
      std::vector<int32_t> expected;
      for (int64_t o = 0; o < shape_size(out); ++o) {
        auto oc = coords(o, out);
        int32_t r = acc;
        Shape wins(w.dims.begin(), w.dims.end());
        for (int64_t k = 0; k < shape_size(wins); ++k) {
          auto kc = coords(k, wins);
          bool inside = true;
          std::vector<int64_t> ic(oc.size());
          for (size_t a = 0; a < oc.size(); ++a) {
            ic[a] = oc[a] * w.strides[a] - w.padding[a].first + kc[a] * w.dilations[a];
            inside = inside && ic[a] >= 0 && ic[a] < c.shape[a];
          }
          r = f.host(inside ? x[size_t(linear(ic, c.shape))] : acc, r);
        }
        expected.push_back(r);
      }
      std::vector<int32_t> got;
      try {
        got = download<int32_t>(d, run_op(d, OpId::window_reduce, {DType::S32, out},
                                          {upload(d, DType::S32, c.shape, x), upload(d, DType::S32, {}, std::vector<int32_t>{acc})},
                                          Attrs::of(w)));
      } catch (const std::exception& e) {
        failures += c.name + " [" + f.program + "]: threw " + e.what() + "\n";
        continue;
      }
      size_t bad = 0;
      for (size_t i = 0; i < expected.size(); ++i) bad += got[i] != expected[i];
      if (bad) failures += c.name + " [" + f.program + "]: " + std::to_string(bad) + " of " + std::to_string(expected.size()) + " differ\n";
    }
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

}  // namespace
