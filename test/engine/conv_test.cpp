// The conv family on fresh random inputs against a host reference in double precision (integers
// exactly, with wrap-around): every option (strides, padding negative too, input and kernel
// dilation, feature and batch groups, input/kernel/output permutations), 1 to 3 spatial axes,
// degenerate shapes (empty batch, no channels, size 1, primes), sizes that straddle tiles, every
// type class, mixed input types, strided input views, the GPU tiles and split-K, and a sampled
// sweep of random configurations (NXV_TEST_SEED; more with NXV_TEST_EXHAUSTIVE=1).
// Floats: |got - exact| <= eps_out * |exact| + (K + 2) * eps_acc * sum |x| |w| over the K
// products (eps_acc: f32 for f16/bf16/f32/c64 outputs, f64 for f64/c128).
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>

#include "device/device_impl.hpp"
#include "ops/conv/conv_attrs.hpp"
#include "ops/dot/dot_host.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

// A conv in canonical terms: input [batch, channels, spatial...], kernel [filters, channels
// per group, spatial...]; the permutations say how the tensors are stored (canonical axis i is
// stored axis perm[i]) and where the result's canonical axes go.
struct ConvCase {
  std::string name;
  Shape input, kernel;  // canonical
  std::vector<int64_t> strides;
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> idil, kdil;  // empty: all 1
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_perm, ker_perm, out_perm;  // empty: identity
  bool input_slice = false;  // the input handed over as a slice of a larger tensor (offset, row pitch)
};

struct Types {
  DType input, kernel, out;
};


// Row-major pitches of the stored tensor, per canonical axis.
std::vector<int64_t> canonical_pitches(const Shape& canonical, const std::vector<int64_t>& perm) {
  std::vector<int64_t> pitch = row_major_strides(stored_shape(canonical, perm)), out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = pitch[size_t(perm[i])];
  return out;
}

int64_t extent_after(int64_t size, int64_t dil) { return size == 0 ? 0 : (size - 1) * dil + 1; }

Shape canonical_output(const ConvCase& c, const ConvAttrs& a) {
  Shape out{c.input[0] / c.batch_groups, c.kernel[0]};
  for (size_t d = 0; d + 2 < c.input.size(); ++d) {
    int64_t padded = extent_after(c.input[2 + d], a.input_dilation[d]) + a.padding[d].first + a.padding[d].second;
    int64_t span = extent_after(c.kernel[2 + d], a.kernel_dilation[d]);
    out.push_back(padded < span ? 0 : (padded - span) / a.strides[d] + 1);
  }
  return out;
}

std::string describe(const ConvCase& c, const Types& t) {
  auto list = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  };
  ConvAttrs a = conv_attrs_of(c);
  std::ostringstream s;
  s << c.name << ": " << dtype_name(t.input) << list(c.input) << " * " << dtype_name(t.kernel) << list(c.kernel)
    << " -> " << dtype_name(t.out) << " strides " << list(a.strides) << " padding [";
  for (auto [lo, hi] : a.padding) s << "(" << lo << "," << hi << ")";
  s << "] idil " << list(a.input_dilation) << " kdil " << list(a.kernel_dilation) << " groups "
    << c.feature_groups << "/" << c.batch_groups << " perms " << list(a.input_permutation)
    << list(a.kernel_permutation) << list(a.output_permutation) << (c.input_slice ? " (input slice)" : "");
  return s.str();
}

// Uploads a tensor of canonical shape `canonical` stored under `perm`; returns it and its
// stored row-major bytes. With `slice`, it is the leading part of a tensor one larger along
// every axis (a view with an offset and wider pitches); the bytes are then the view's.
std::pair<Tensor, std::vector<std::byte>> make_stored(Device& dev, DType t, const Shape& canonical,
                                                      const std::vector<int64_t>& perm, bool slice, std::mt19937& rng) {
  Shape stored = stored_shape(canonical, perm);
  if (!slice) {
    auto bytes = random_typed_values(t, size_t(shape_size(stored)), rng);
    return {from_host(dev, t, stored, bytes.data(), bytes.size()), bytes};
  }
  Shape big = stored;
  for (auto& x : big) x += 1;
  auto bytes = random_typed_values(t, size_t(shape_size(big)), rng);
  Tensor whole = from_host(dev, t, big, bytes.data(), bytes.size());
  Tensor view = slice_view(whole, std::vector<int64_t>(big.size(), 1), stored, std::vector<int64_t>(big.size(), 1));
  if (view.size() == 0) return {view, {}};
  return {view, to_host(dev, view)};
}

// `slack`: a factor on the accumulation term of the tolerance (algorithms that combine the
// products otherwise, as Winograd's).
void run_case(Device& dev, const ConvCase& c, const Types& types, uint32_t seed, double slack_factor = 1.0) {
  SCOPED_TRACE(describe(c, types));
  std::mt19937 rng(seed);
  ConvAttrs a = conv_attrs_of(c);
  auto [input, ibytes] = make_stored(dev, types.input, c.input, a.input_permutation, c.input_slice, rng);
  auto [kernel, kbytes] = make_stored(dev, types.kernel, c.kernel, a.kernel_permutation, false, rng);
  Shape canon = canonical_output(c, a);
  Shape out_shape = stored_shape(canon, a.output_permutation);
  Tensor result = run_op(dev, "conv", {types.out, out_shape}, {input, kernel}, Attrs::of(a));
  ASSERT_EQ(result.shape, out_shape);
  ASSERT_EQ(result.type, types.out);
  if (result.size() == 0) return;
  std::vector<std::byte> got = to_host(dev, result);

  size_t r = c.input.size() - 2;
  auto ip = canonical_pitches(c.input, a.input_permutation);
  auto kp = canonical_pitches(c.kernel, a.kernel_permutation);
  auto op = canonical_pitches(canon, a.output_permutation);
  size_t isz = dtype_size(types.input), ksz = dtype_size(types.kernel), osz = dtype_size(types.out);
  int64_t filters = c.kernel[0], ci = c.kernel[1];
  int64_t per_fgroup = filters / c.feature_groups, per_bgroup = filters / c.batch_groups;
  int64_t out_batch = canon[0];
  Shape kspatial(c.kernel.begin() + 2, c.kernel.end()), ospatial(canon.begin() + 2, canon.end());
  int64_t kpositions = shape_size(kspatial), K = ci * kpositions;
  double eps_acc = types.out == DType::F64 || types.out == DType::C128 ? 0x1p-53 : 0x1p-24;
  size_t failures = 0;
  for (int64_t o_index = 0; o_index < shape_size(canon); ++o_index) {
    std::vector<int64_t> oc = coords(o_index, canon);
    int64_t n = oc[0], f = oc[1];
    int64_t g = f / per_fgroup, bg = f / per_bgroup;
    int64_t item = n + (c.batch_groups > 1 ? bg * out_batch : 0);
    uint64_t iacc = 0;
    std::complex<double> acc = 0;
    double mag = 0;
    for (int64_t q = 0; q < kpositions; ++q) {
      std::vector<int64_t> kc = coords(q, kspatial);
      int64_t ioff = item * ip[0], koff = f * kp[0];
      bool inside = true;
      for (size_t d = 0; d < r && inside; ++d) {
        int64_t x = oc[2 + d] * a.strides[d] - a.padding[d].first + kc[d] * a.kernel_dilation[d];
        if (x < 0 || x % a.input_dilation[d] != 0 || x / a.input_dilation[d] >= c.input[2 + d]) inside = false;
        ioff += x / std::max<int64_t>(a.input_dilation[d], 1) * ip[2 + d];
        koff += kc[d] * kp[2 + d];
      }
      if (!inside) continue;
      for (int64_t ch = 0; ch < ci; ++ch) {
        const std::byte* x = ibytes.data() + size_t(ioff + (g * ci + ch) * ip[1]) * isz;
        const std::byte* w = kbytes.data() + size_t(koff + ch * kp[1]) * ksz;
        if (is_integer(types.out)) {
          iacc += int_at(types.input, x) * int_at(types.kernel, w);
        } else {
          auto xv = typed_value_at(types.input, x), wv = typed_value_at(types.kernel, w);
          acc += xv * wv;
          mag += std::abs(xv) * std::abs(wv);
        }
      }
    }
    int64_t where = 0;
    for (size_t j = 0; j < canon.size(); ++j) where += oc[j] * op[j];
    const std::byte* have_at = got.data() + size_t(where) * osz;
    if (is_integer(types.out)) {
      uint64_t want = 0, have = 0;
      std::memcpy(&want, &iacc, osz);
      std::memcpy(&have, have_at, osz);
      if (want != have && failures++ < 5)
        ADD_FAILURE() << "output " << o_index << " (canonical): got " << have << ", expected " << want;
      continue;
    }
    std::complex<double> have = typed_value_at(types.out, have_at);
    double slack = (is_complex(types.out) ? 2.0 : 1.0) * slack_factor;
    double tol_re = type_epsilon(types.out) * std::abs(acc.real()) + slack * double(K + 2) * eps_acc * mag;
    double tol_im = type_epsilon(types.out) * std::abs(acc.imag()) + slack * double(K + 2) * eps_acc * mag;
    bool ok = std::abs(have.real() - acc.real()) <= tol_re && std::abs(have.imag() - acc.imag()) <= tol_im;
    if (!ok && failures++ < 5)
      ADD_FAILURE() << "output " << o_index << " (canonical): got " << have << ", expected " << acc << " (tolerance "
                    << tol_re << ")";
  }
  if (failures > 5) ADD_FAILURE() << failures << " outputs differ in all";
}

using Pad = std::vector<std::pair<int64_t, int64_t>>;

std::vector<ConvCase> conv_cases() {
  return {
      {"basic_3x3", {1, 1, 5, 5}, {1, 1, 3, 3}},
      {"same_padding", {2, 3, 7, 6}, {4, 3, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
      {"strides_asymmetric_padding", {2, 3, 9, 8}, {5, 3, 3, 2}, {2, 3}, Pad{{0, 1}, {2, 0}}},
      {"negative_padding", {1, 2, 8, 9}, {3, 2, 2, 3}, {1, 2}, Pad{{-1, 0}, {1, -2}}},
      {"kernel_dilation_1d", {1, 2, 11}, {3, 2, 3}, {}, {}, {}, {3}},
      {"input_dilation_1d", {2, 2, 6}, {3, 2, 3}, {}, Pad{{1, 2}}, {2}},
      {"input_dilation_strided_2d", {1, 3, 5, 4}, {2, 3, 2, 3}, {1, 2}, Pad{{2, 2}, {1, 0}}, {2, 3}, {1, 2}},
      {"feature_groups_2", {2, 4, 6, 5}, {6, 2, 2, 2}, {}, {}, {}, {}, 2},
      {"depthwise_8", {1, 8, 7, 7}, {8, 1, 3, 3}, {}, Pad{{1, 1}, {1, 1}}, {}, {}, 8},
      {"batch_groups_2", {4, 3, 6, 6}, {4, 3, 3, 3}, {}, {}, {}, {}, 1, 2},
      {"batch_groups_all_1d", {3, 2, 10}, {6, 2, 4}, {}, {}, {}, {}, 1, 3},
      {"nhwc_hwio", {2, 5, 6, 7}, {4, 5, 3, 2}, {1, 1}, Pad{{1, 1}, {0, 1}}, {}, {}, 1, 1, {0, 3, 1, 2},
       {3, 2, 0, 1}, {0, 3, 1, 2}},
      {"conv3d", {1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, {1, 2, 1}, Pad{{0, 1}, {1, 1}, {0, 0}}},
      {"tile_edges_1d", {3, 5, 70}, {37, 5, 4}},
      {"long_k_aligned", {1, 64, 9, 9}, {70, 64, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
      {"channels_13", {2, 13, 8, 7}, {9, 13, 3, 3}, {2, 1}, Pad{{1, 1}, {1, 1}}},
      {"empty_batch", {0, 2, 5}, {3, 2, 2}},
      {"no_channels", {2, 0, 5}, {3, 0, 2}},
      {"size_1", {1, 1, 1}, {1, 1, 1}},
      {"kernel_wider_than_input", {1, 2, 3, 2}, {2, 2, 5, 4}, {}, Pad{{2, 2}, {2, 2}}},
      {"primes", {1, 7, 13, 11}, {5, 7, 3, 5}, {2, 3}, Pad{{1, 2}, {2, 1}}},
      {"output_permuted_1d", {2, 3, 9}, {4, 3, 2}, {}, {}, {}, {}, 1, 1, {1, 2, 0}, {2, 0, 1}, {2, 0, 1}},
      {"input_slice_view", {2, 3, 6, 5}, {4, 3, 2, 2}, {}, Pad{{1, 0}, {0, 1}}, {}, {}, 1, 1, {}, {}, {}, true},
      {"gradient_like_nhwc", {3, 4, 5, 5}, {6, 4, 3, 3}, {2, 2}, Pad{{1, 2}, {1, 2}}, {2, 2}, {}, 1, 1,
       {0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}},
  };
}

const DType kAllTypes[] = {DType::U8,  DType::S8,  DType::U16,  DType::S16, DType::U32, DType::S32, DType::U64,
                           DType::S64, DType::F16, DType::BF16, DType::F32, DType::F64, DType::C64, DType::C128};

class Conv : public DeviceTest {
 protected:
  bool supported(const Types& t) {
    ConvCase c{"probe", {1, 1, 3}, {1, 1, 2}};
    TensorSpec specs[] = {contiguous_spec(t.input, {1, 1, 3}), contiguous_spec(t.kernel, {1, 1, 2})};
    return bool(check_op(*device_, *find_op("conv"), {t.out, {1, 1, 2}}, specs, Attrs::of(conv_attrs_of(c))));
  }
  const ConvCase& named(const std::string& name) {
    static const std::vector<ConvCase> all = conv_cases();
    for (const auto& c : all)
      if (c.name == name) return c;
    throw std::runtime_error("no case " + name);
  }
};

// Every option, shape and layout in f32 and s32 (exact wrap-around).
TEST_F(Conv, EveryOptionF32AndS32) {
  auto cases = conv_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + uint32_t(i));
    run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + uint32_t(i));
  }
}

// Every type (a kernel compile each, slow on lavapipe): NCHW with the kernel copied; NHWC with
// the kernel read in place on four types drawn per run (every type with NXV_TEST_EXHAUSTIVE=1).
TEST_F(Conv, EveryType) {
  std::vector<DType> all(std::begin(kAllTypes), std::end(kAllTypes));
  std::vector<DType> sampled = sample_cases(all, 4);
  for (DType t : all) {
    if (!supported({t, t, t})) {
      std::printf("conv on %s is not native on this device\n", std::string(dtype_name(t)).c_str());
      continue;
    }
    run_case(*device_, named("same_padding"), {t, t, t}, sample_seed() + 100);
    if (std::find(sampled.begin(), sampled.end(), t) != sampled.end())
      run_case(*device_, named("nhwc_hwio"), {t, t, t}, sample_seed() + 101);
  }
}

// Inputs of different types (Nx.conv makes the output a float; the engine converts on load).
TEST_F(Conv, MixedTypes) {
  const Types pairs[] = {{DType::S32, DType::S32, DType::F32}, {DType::U8, DType::S8, DType::S16},
                         {DType::F16, DType::F32, DType::F32}, {DType::F32, DType::C64, DType::C64},
                         {DType::BF16, DType::BF16, DType::F32}};
  for (const auto& t : pairs) {
    if (!supported(t)) continue;
    run_case(*device_, named("strides_asymmetric_padding"), t, sample_seed() + 200);
  }
}

// Refusals: an integer output of float inputs, shapes Nx would refuse.
TEST_F(Conv, Refusals) {
  ConvCase c{"probe", {1, 2, 5}, {3, 2, 2}};
  OpId conv = *find_op("conv");
  auto check = [&](const Types& t, const Shape& in, const Shape& ker, const Shape& out, const ConvAttrs& a) {
    TensorSpec specs[] = {contiguous_spec(t.input, in), contiguous_spec(t.kernel, ker)};
    return check_op(*device_, conv, {t.out, out}, specs, Attrs::of(a));
  };
  Types f32{DType::F32, DType::F32, DType::F32};
  EXPECT_TRUE(check(f32, {1, 2, 5}, {3, 2, 2}, {1, 3, 4}, conv_attrs_of(c)));
  EXPECT_FALSE(check({DType::F32, DType::F32, DType::S32}, {1, 2, 5}, {3, 2, 2}, {1, 3, 4}, conv_attrs_of(c)));
  EXPECT_FALSE(check(f32, {1, 2, 5}, {3, 2, 2}, {1, 3, 5}, conv_attrs_of(c)));  // wrong output shape
  EXPECT_FALSE(check(f32, {1, 3, 5}, {3, 2, 2}, {1, 3, 4}, conv_attrs_of(c)));  // channels
  ConvAttrs both = conv_attrs_of(c);
  both.feature_group_size = 2, both.batch_group_size = 2;
  EXPECT_FALSE(check(f32, {2, 4, 5}, {4, 2, 2}, {1, 4, 4}, both));
  ConvAttrs bad_perm = conv_attrs_of(c);
  bad_perm.input_permutation = {0, 0, 1};
  Support s = check(f32, {1, 2, 5}, {3, 2, 2}, {1, 3, 4}, bad_perm);
  EXPECT_FALSE(s);
  EXPECT_NE(s.reason.find("permutation"), std::string::npos) << s.reason;
}


// The tiles a GPU gets (four-wide shared-memory reads with the larger ones), and split-K (its
// partial sums in the output's layout, added by a second pass), on any device.
TEST_F(Conv, GpuTilesAndSplitK) {
  ScopedTuning gpu("gpu_paths", "1");
  const char* names[] = {"long_k_aligned", "nhwc_hwio", "input_dilation_strided_2d", "batch_groups_2"};
  for (const char* tile : {"64,64,16,4,4", "32,32,16,2,2"}) {
    ScopedTuning forced("dot.tile", tile);
    SCOPED_TRACE(std::string("tile ") + tile);
    for (size_t i = 0; i < std::size(names); ++i)
      run_case(*device_, named(names[i]), {DType::F32, DType::F32, DType::F32}, sample_seed() + 300 + uint32_t(i));
  }
  ScopedTuning splits("dot.splits", "3");
  for (size_t i = 0; i < std::size(names); ++i)
    run_case(*device_, named(names[i]), {DType::F32, DType::F32, DType::F32}, sample_seed() + 320 + uint32_t(i));
  run_case(*device_, named("gradient_like_nhwc"), {DType::S32, DType::S32, DType::S32}, sample_seed() + 330);
  run_case(*device_, named("channels_13"), {DType::F16, DType::F16, DType::F16}, sample_seed() + 340);
}

// The tile core's variants under conv as a GPU runs them: channels-last inputs and kernels
// loaded four channels / filters at a time (channels and filters multiples of 4; with input
// dilation and feature groups), channels-first with one row per invocation (128 x 128 tiles),
// an input slice (scalar loads), 128 rows straddled; one or two shared-memory stages,
// subgroups as blocks; split-K aligned to the vectors.
TEST_F(Conv, GpuTileVariants) {
  ScopedTuning gpu("gpu_paths", "1");
  std::vector<int64_t> nhwc{0, 3, 1, 2}, hwio{3, 2, 0, 1};
  std::vector<ConvCase> cases = {
      {"nhwc_vec4", {2, 8, 9, 7}, {12, 8, 3, 3}, {1, 1}, Pad{{1, 1}, {1, 1}}, {}, {}, 1, 1, nhwc, hwio, nhwc},
      {"nhwc_vec4_idil_groups", {2, 16, 6, 5}, {8, 8, 3, 2}, {2, 1}, Pad{{1, 2}, {0, 1}}, {2, 1}, {}, 2, 1, nhwc,
       hwio, nhwc},
      {"nchw_rows_144", {2, 8, 9, 8}, {20, 8, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
  };
  ConvCase sliced = cases[0];
  sliced.name = "nhwc_slice";
  sliced.input_slice = true;
  cases.push_back(sliced);
  auto all = [&](uint32_t seed) {
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i].name);
      run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, seed + uint32_t(i));
    }
  };
  {
    ScopedTuning tile("dot.tile", "128,128,16,8,8");
    all(sample_seed() + 700);
    ScopedTuning splits("dot.splits", "3");
    all(sample_seed() + 710);
  }
  {
    // The channels-first default on GPUs: 64 x 128 with subgroups of 16 x 2 invocations.
    ScopedTuning tile("dot.tile", "64,128,16,8,8");
    ScopedTuning warp("dot.warp_x", "16");
    all(sample_seed() + 730);
  }
  ScopedTuning tile("dot.tile", "64,64,16,4,4");
  ScopedTuning warp("dot.warp_x", "8");
  all(sample_seed() + 720);
}

// conv as im2col + dot's GEMM (the tier GPUs with cooperative matrices take for 16-bit types),
// forced on: every single-group case in f32 and s32, and the 16-bit types; also on the GPU
// tile paths of dot. Cases with groups keep the implicit GEMM.
TEST_F(Conv, Im2colTier) {
  ScopedTuning im2col("conv.im2col", "1");
  auto cases = conv_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 800 + uint32_t(i));
    run_case(*device_, cases[i], {DType::S32, DType::S32, DType::S32}, sample_seed() + 840 + uint32_t(i));
  }
  for (DType t : {DType::F16, DType::BF16}) {
    if (!supported({t, t, t})) continue;
    for (const char* name : {"same_padding", "nhwc_hwio", "long_k_aligned", "primes", "gradient_like_nhwc"})
      run_case(*device_, named(name), {t, t, t}, sample_seed() + 880);
    run_case(*device_, named("same_padding"), {t, t, DType::F32}, sample_seed() + 890);
  }
  ScopedTuning gpu("gpu_paths", "1");
  for (const char* name : {"long_k_aligned", "nhwc_hwio", "input_dilation_strided_2d", "conv3d", "output_permuted_1d"})
    run_case(*device_, named(name), {DType::F32, DType::F32, DType::F32}, sample_seed() + 900);
}

// The 16-byte gather (conv_gather16.glsl) that the im2col tier writes A with, and that the
// cooperative-matrix GEMM gathers A with (its implicit mode, on GPUs that have the tier):
// channels that are multiples of the vector (4 f32, 8 f16/bf16, 2 f64), from channels-first
// (copied channels-last) and channels-last inputs, strides, padding negative too, both
// dilations, 1 to 3 axes, rows straddling tiles; each also with the scalar gather, and on the
// GPU with the implicit mode off. A sliced input falls back to the scalar gather.
TEST_F(Conv, GatheredChannels) {
  ScopedTuning im2col("conv.im2col", "1");
  const std::vector<ConvCase> cases = {
      {"nchw_same_16", {2, 16, 9, 7}, {12, 16, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
      {"nhwc_strided_idil_8", {2, 8, 7, 6}, {5, 8, 3, 2}, {2, 1}, Pad{{1, 2}, {0, -1}}, {2, 1}, {}, 1, 1,
       {0, 3, 1, 2}, {3, 2, 0, 1}},
      {"conv3d_8", {1, 8, 4, 5, 3}, {3, 8, 2, 3, 2}, {1, 2, 1}, Pad{{0, 1}, {1, 1}, {1, 0}}},
      {"kdil_1d_24", {3, 24, 17}, {7, 24, 3}, {}, Pad{{2, 0}}, {}, {2}},
      {"pointwise_32_edges", {1, 32, 13, 11}, {33, 32, 1, 1}},
      {"slice_8", {2, 8, 6, 5}, {4, 8, 2, 2}, {}, Pad{{1, 0}, {0, 1}}, {}, {}, 1, 1, {}, {}, {}, true},
  };
  auto all = [&](uint32_t seed) {
    for (const ConvCase& c : cases) {
      SCOPED_TRACE(c.name);
      for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::S32}) {
        if (!supported({t, t, t})) continue;
        run_case(*device_, c, {t, t, t}, seed++);
      }
      if (supported({DType::BF16, DType::BF16, DType::F32}))
        run_case(*device_, c, {DType::BF16, DType::BF16, DType::F32}, seed++);
    }
  };
  all(sample_seed() + 1000);
  {
    ScopedTuning scalar("conv.gather_scalar", "1");
    all(sample_seed() + 1100);
  }
  if (device_->info().type != "cpu") {
    ScopedTuning materialised("conv.no_implicit", "1");
    all(sample_seed() + 1200);
  }
}

// CPU drivers: A written by the host and multiplied by the system's BLAS (NX_VULKAN_HOST_BLAS=1
// takes every single-group f32/f64 conv): every case of the suite (permuted, strided and sliced
// inputs, both dilations, negative padding, 1-3 axes).
TEST_F(Conv, HostBlasTier) {
  if (device_->impl().core->info().type != "cpu" || !host_blas_available())
    GTEST_SKIP() << "the host BLAS tier needs a CPU driver and libopenblas.so.0";
  ScopedTuning on("host_blas", "1");
  auto cases = conv_cases();
  bool f64 = device_->has(kCapFloat64);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    run_case(*device_, cases[i], {DType::F32, DType::F32, DType::F32}, sample_seed() + 1300 + uint32_t(i));
    if (f64) run_case(*device_, cases[i], {DType::F64, DType::F64, DType::F64}, sample_seed() + 1340 + uint32_t(i));
  }
  // A and the product are host steps: at least two kernels fewer than im2col with dot's kernel.
  const ConvCase& c = named("long_k_aligned");
  auto commands = [&](const char* blas) {
    ScopedTuning mode("host_blas", blas), im2col("conv.im2col", "1");
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    run_case(*device_, c, {DType::F32, DType::F32, DType::F32}, sample_seed() + 1390);
    device_->synchronize();
    return device_->stream_stats().commands - before;
  };
  EXPECT_GE(commands("0"), commands("1") + 2);
}

// Winograd's F(2x2, 3x3) (conv_winograd.hpp), forced on any device: 3 x 3 kernels with unit
// strides; paddings (negative and asymmetric too) and sizes whose output edges cut 2 x 2 tiles;
// channels-first and channels-last inputs, permuted kernels and outputs, a sliced input; f32
// and f64; batch items in chunks. The tolerance allows 8x the direct sum's accumulation error.
TEST_F(Conv, WinogradTier) {
  ScopedTuning on("conv.winograd", "1");
  const std::vector<ConvCase> cases = {
      {"basic_3x3", {1, 1, 5, 5}, {1, 1, 3, 3}},
      {"same_odd", {2, 3, 7, 6}, {4, 3, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
      {"one_output", {1, 5, 3, 3}, {2, 5, 3, 3}},
      {"negative_and_asymmetric", {2, 4, 9, 8}, {5, 4, 3, 3}, {}, Pad{{-1, 2}, {2, -1}}},
      {"channels_64", {1, 64, 9, 9}, {70, 64, 3, 3}, {}, Pad{{1, 1}, {1, 1}}},
      {"nhwc_hwio", {2, 33, 6, 7}, {17, 33, 3, 3}, {}, Pad{{1, 1}, {0, 1}}, {}, {}, 1, 1, {0, 3, 1, 2},
       {3, 2, 0, 1}, {0, 3, 1, 2}},
      {"nchw_in_nhwc_out", {3, 8, 10, 5}, {6, 8, 3, 3}, {}, Pad{{2, 2}, {1, 1}}, {}, {}, 1, 1, {}, {}, {0, 3, 1, 2}},
      {"slice", {2, 3, 6, 5}, {4, 3, 3, 3}, {}, Pad{{1, 0}, {0, 1}}, {}, {}, 1, 1, {}, {}, {}, true},
  };
  uint32_t seed = sample_seed() + 1400;
  for (const ConvCase& c : cases)
    for (DType t : {DType::F32, DType::F64})
      if (supported({t, t, t})) run_case(*device_, c, {t, t, t}, seed++, 8.0);
  // Five items in chunks of two (f32) or one (f64).
  ConvCase chunked{"chunked", {5, 8, 10, 9}, {6, 8, 3, 3}, {}, Pad{{1, 1}, {1, 1}}};
  {
    ScopedTuning budget("conv.winograd_budget", "25600");
    for (DType t : {DType::F32, DType::F64})
      if (supported({t, t, t})) run_case(*device_, chunked, {t, t, t}, seed++, 8.0);
    for (const ConvCase& c : {chunked, cases[5]}) {
      ScopedTuning tiles("gpu_paths", "1");
      run_case(*device_, c, {DType::F32, DType::F32, DType::F32}, seed++, 8.0);
    }
  }
  // The tier is taken: the kernel's transform, then per chunk of two items the input's, the
  // product and the output's; more commands than the direct GEMM's (a kernel copy, split-K).
  auto commands = [&](const char* mode) {
    ScopedTuning m("conv.winograd", mode), no_blas("host_blas", "0");
    ScopedTuning budget("conv.winograd_budget", "25600");
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    run_case(*device_, chunked, {DType::F32, DType::F32, DType::F32}, seed, 8.0);
    device_->synchronize();
    return device_->stream_stats().commands - before;
  };
  uint64_t winograd = commands("1"), direct = commands("0");
  EXPECT_GE(winograd, 1u + 3u * 3u);
  EXPECT_GT(winograd, direct);
  // A budget of one and a half items: three chunks of one for three items, never two of two.
  {
    ConvCase three = chunked;
    three.input[0] = 3;
    ScopedTuning budget("conv.winograd_budget", "19200"), no_blas("host_blas", "0");
    device_->synchronize();
    uint64_t before = device_->stream_stats().commands;
    run_case(*device_, three, {DType::F32, DType::F32, DType::F32}, seed, 8.0);
    device_->synchronize();
    EXPECT_GE(device_->stream_stats().commands - before, 1u + 3u * 3u);
  }
}

// Where device memory cannot hold the transformed input and products (four times the input
// and the output: 4 MiB here, the input and output 1 MiB, in a 4 MiB heap), the direct GEMM
// takes the conv.
TEST_F(Conv, WinogradLeavesConvsItsTensorsDoNotFitToTheDirectGemm) {
  ScopedTuning on("conv.winograd", "1"), no_blas("host_blas", "0");
  auto small = Device::open({.heap_limit = 4ull << 20});
  ConvCase c{"large", {1, 8, 128, 128}, {8, 8, 3, 3}, {}, Pad{{1, 1}, {1, 1}}};
  run_case(*small, c, {DType::F32, DType::F32, DType::F32}, sample_seed() + 1460);
}

// Winograd's outputs where the inputs hold Inf, NaN and zeros: Inf and NaN as the direct sum
// gives them (those outputs are recomputed directly), a sum of zero products +0.0 as the direct
// sum's, finite outputs near it.
TEST_F(Conv, WinogradSpecialValues) {
  ConvCase c{"specials", {2, 6, 8, 7}, {5, 6, 3, 3}, {}, Pad{{1, 1}, {1, 1}}};
  ConvAttrs a = conv_attrs_of(c);
  std::mt19937 rng(sample_seed() + 1450);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> in(size_t(shape_size(c.input))), ker(size_t(shape_size(c.kernel)));
  for (auto& x : in) x = value(rng);
  for (auto& x : ker) x = value(rng);
  const float inf = std::numeric_limits<float>::infinity();
  in[3] = inf, in[100] = -inf, in[101] = inf, in[250] = std::nanf(""), in[400] = inf;
  ker[4] = 0.0f;  // filter 0's centre weight on channel 0 meets in[3], an Inf: NaN in the direct sum
  Shape out_shape = canonical_output(c, a);
  auto run = [&](const char* mode, const std::vector<float>& x, const std::vector<float>& w) {
    ScopedTuning m("conv.winograd", mode), no_blas("host_blas", "0");
    Tensor ti = upload(*device_, DType::F32, c.input, x), tk = upload(*device_, DType::F32, c.kernel, w);
    return download<float>(*device_, run_op(*device_, "conv", {DType::F32, out_shape}, {ti, tk}, Attrs::of(a)));
  };
  auto direct = run("0", in, ker), winograd = run("1", in, ker);
  ASSERT_EQ(direct.size(), winograd.size());
  size_t nonfinite = 0;
  for (size_t i = 0; i < direct.size(); ++i) {
    if (!std::isfinite(direct[i])) ++nonfinite;
    if (std::isnan(direct[i])) EXPECT_TRUE(std::isnan(winograd[i])) << "output " << i << ": " << winograd[i];
    else if (std::isinf(direct[i])) EXPECT_EQ(winograd[i], direct[i]) << "output " << i;
    else EXPECT_NEAR(winograd[i], direct[i], 1e-4f) << "output " << i;
  }
  EXPECT_GT(nonfinite, 0u);
  EXPECT_LT(nonfinite, direct.size());
  // All-zero input by negative weights: every product -0.0, every output +0.0.
  std::vector<float> zeros(in.size(), 0.0f), negative(ker.size());
  for (auto& x : negative) x = -1.0f - std::abs(value(rng));
  for (float y : run("1", zeros, negative)) {
    EXPECT_EQ(y, 0.0f);
    EXPECT_FALSE(std::signbit(y));
  }
}

// Random configurations: 1-3 spatial axes, random extents, strides, paddings (negative too),
// dilations, groups and permutations; f32, s32 or f64.
TEST_F(Conv, RandomConfigurations) {
  std::mt19937 rng(sample_seed() + 500);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int count = exhaustive_tests() ? 200 : 16;
  const DType types[] = {DType::F32, DType::S32, DType::F64};
  for (int n = 0; n < count; ++n) {
    ConvCase c;
    c.name = "random_" + std::to_string(n);
    size_t r = size_t(pick(1, 3));
    int64_t groups = pick(1, 3);
    bool batch_grouped = groups > 1 && rng() % 2 == 0;
    c.feature_groups = batch_grouped ? 1 : groups;
    c.batch_groups = batch_grouped ? groups : 1;
    int64_t ci = pick(1, 6);
    c.input = {pick(1, 3) * c.batch_groups, ci * c.feature_groups};
    c.kernel = {pick(1, 5) * groups, ci};
    for (size_t d = 0; d < r; ++d) {
      int64_t size = pick(1, r == 1 ? 30 : 9), k = pick(1, 4);
      c.input.push_back(size);
      c.kernel.push_back(k);
      c.strides.push_back(pick(1, 3));
      c.idil.push_back(rng() % 3 == 0 ? pick(2, 3) : 1);
      c.kdil.push_back(rng() % 3 == 0 ? pick(2, 3) : 1);
      c.padding.push_back({pick(-1, 3), pick(-1, 3)});
    }
    ConvAttrs a = conv_attrs_of(c);
    Shape out = canonical_output(c, a);
    if (shape_size(out) == 0 || shape_size(out) * ci * shape_size(Shape(c.kernel.begin() + 2, c.kernel.end())) > 200000) {
      --n;
      continue;
    }
    for (auto* p : {&c.in_perm, &c.ker_perm, &c.out_perm}) {
      *p = identity(r + 2);
      if (rng() % 2) std::shuffle(p->begin(), p->end(), rng);
    }
    c.input_slice = rng() % 4 == 0;
    DType t = types[rng() % 3];
    if (!supported({t, t, t})) t = DType::F32;
    run_case(*device_, c, {t, t, t}, sample_seed() + 600 + uint32_t(n));
  }
}

}  // namespace
