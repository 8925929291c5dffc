// The shape family on fresh random inputs against a host reference written from Nx's
// definitions, bit for bit: views that record nothing (reshape, squeeze, broadcast, slice),
// transposes of random permutations (tiled and not, every element size, non-contiguous
// inputs), reverse, pad (negative and interior), concatenate and stack (mixed types),
// put_slice, iota and eye.
#include <bit>
#include <cstring>
#include <functional>
#include <random>

#include "device/device_impl.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

std::vector<std::byte> random_bytes(std::mt19937& rng, size_t n) {
  std::vector<std::byte> b(n);
  for (auto& x : b) x = std::byte(rng() & 0xff);
  return b;
}

// Host reference: out element i takes in element from(i) (-1: the pad element).
std::vector<std::byte> gather(const std::vector<std::byte>& in, size_t elem, int64_t out_size,
                              const std::function<int64_t(int64_t)>& from, const std::vector<std::byte>& pad = {}) {
  std::vector<std::byte> out(size_t(out_size) * elem);
  for (int64_t i = 0; i < out_size; ++i) {
    int64_t j = from(i);
    std::memcpy(out.data() + i * elem, j < 0 ? pad.data() : in.data() + j * elem, elem);
  }
  return out;
}

Attrs attrs(ShapeAttrs a) { return Attrs::of(std::move(a)); }

class Shape_ : public DeviceTest {
 protected:
  std::mt19937 rng{sample_seed()};

  Shape random_shape(size_t rank, int64_t max_dim) {
    Shape s(rank);
    for (auto& d : s) d = 1 + int64_t(rng() % max_dim);
    return s;
  }
  std::vector<int64_t> permutation(size_t rank) {
    std::vector<int64_t> p(rank);
    for (size_t i = 0; i < rank; ++i) p[i] = int64_t(i);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
  }
  std::vector<std::byte> bytes_of(const Tensor& t) {
    std::vector<std::byte> b(size_t(t.size()) * dtype_size(t.type));
    if (!b.empty()) to_host(*device_, t, b.data(), b.size());
    return b;
  }
  uint64_t commands() {
    device_->impl().stream.synchronize();
    return device_->impl().stream.stats().commands;
  }
  // Transposes a random tensor of `type` and `shape` by `perm`; returns the result's bytes and
  // the expected ones.
  std::pair<std::vector<std::byte>, std::vector<std::byte>> transpose_random(DType type, const Shape& shape,
                                                                            const std::vector<int64_t>& perm) {
    size_t rank = shape.size(), e = dtype_size(type);
    auto data = random_bytes(rng, size_t(shape_size(shape)) * e);
    Tensor t = from_host(*device_, type, shape, data.data(), data.size());
    Shape out_shape(rank);
    for (size_t d = 0; d < rank; ++d) out_shape[d] = shape[perm[d]];
    ShapeAttrs a;
    a.axes = perm;
    Tensor r = run_op(*device_, "transpose", {type, out_shape}, {t}, attrs(a));
    auto expected = gather(data, e, shape_size(out_shape), [&](int64_t i) {
      auto oc = coords(i, out_shape);
      std::vector<int64_t> ic(rank);
      for (size_t d = 0; d < rank; ++d) ic[perm[d]] = oc[d];
      return linear(ic, shape);
    });
    return {bytes_of(r), expected};
  }
  void transpose_vector_aligned_shapes();
};

const DType kTypes[] = {DType::U8, DType::F16, DType::F32, DType::F64, DType::C128};

TEST_F(Shape_, ViewsRecordNoDeviceWork) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = float(i);
  Tensor t = upload(*device_, DType::F32, {2, 1, 3, 4}, v);
  uint64_t before = commands();
  Tensor r = run_op(*device_, "reshape", {DType::F32, {6, 4}}, {t});
  ShapeAttrs sq;
  sq.axes = {1};
  Tensor s = run_op(*device_, "squeeze", {DType::F32, {2, 3, 4}}, {t}, attrs(sq));
  ShapeAttrs b;
  b.axes = {0, 1, 2, 3};
  Tensor w = run_op(*device_, "broadcast", {DType::F32, {2, 5, 3, 4}}, {t}, attrs(b));
  ShapeAttrs sl;
  sl.starts = {1, 0, 1, 0}, sl.lengths = {1, 1, 2, 4}, sl.steps = {1, 1, 1, 2};
  Tensor c = run_op(*device_, "slice", {DType::F32, {1, 1, 2, 2}}, {t}, attrs(sl));
  EXPECT_EQ(commands(), before);
  EXPECT_EQ(r.buffer, t.buffer);
  EXPECT_EQ(download<float>(*device_, r), v);
  EXPECT_EQ(download<float>(*device_, s), v);
  EXPECT_EQ(download<float>(*device_, c), (std::vector<float>{16, 18, 20, 22}));
  auto wide = download<float>(*device_, w);
  for (int64_t i = 0; i < 120; ++i) {
    auto k = coords(i, {2, 5, 3, 4});
    ASSERT_EQ(wide[i], v[k[0] * 12 + k[2] * 4 + k[3]]) << i;
  }
}

TEST_F(Shape_, TransposeRandomPermutations) {
  for (int trial = 0; trial < 24; ++trial) {
    DType type = kTypes[trial % 5];
    bool wide = trial % 3 == 0;  // tiles straddled on two or three axes, or many small axes
    size_t rank = wide ? 2 + rng() % 2 : 2 + rng() % 4;
    Shape shape = random_shape(rank, wide ? 70 : 9);
    auto [got, expected] = transpose_random(type, shape, permutation(rank));
    ASSERT_EQ(got, expected) << "trial " << trial << " type " << dtype_name(type);
  }
}

// Shapes whose rows start on 4-element boundaries on both sides take a vector kernel (4
// elements per load and store): GPUs' 64x64 shared-memory tiles (transpose.blocks=2) and
// CPU drivers' 4 x 4 register blocks (=1); sizes straddling tiles and blocks, batched axes, 1-,
// 2- and 4-byte elements, and views that keep the alignment (an offset of 4, rows cut short:
// partial vectors) or lose it (an odd offset: the scalar kernel); 8-byte elements take the
// scalar one.
TEST_F(Shape_, TransposeVectorAlignedShapes) {
  for (const char* blocks : {"1", "2"}) {
    ScopedTuning kernel("transpose.blocks", blocks);
    SCOPED_TRACE(std::string("transpose.blocks=") + blocks);
    transpose_vector_aligned_shapes();
  }
}

void Shape_::transpose_vector_aligned_shapes() {
  const DType types[] = {DType::U8, DType::S16, DType::F32, DType::S32, DType::F64};
  const Shape shapes[] = {{132, 68}, {4, 260}, {260, 4}, {3, 68, 136}, {2, 12, 4, 72}, {64, 64}, {128, 192}, {8, 12}};
  int trial = 0;
  for (const Shape& shape : shapes)
    for (DType type : types) {
      size_t rank = shape.size();
      // The last two axes swapped (a plain matrix transpose per batch), or a random permutation.
      std::vector<int64_t> perm(rank);
      for (size_t d = 0; d < rank; ++d) perm[d] = int64_t(d);
      if (trial++ % 2) perm = permutation(rank);
      else std::swap(perm[rank - 1], perm[rank - 2]);
      auto [got, expected] = transpose_random(type, shape, perm);
      ASSERT_EQ(got, expected) << "shape " << shape.size() << "-d, first " << shape[0] << " type "
                                       << dtype_name(type);
    }
  // Views of a 200x136 matrix: 188 rows cut to 129 columns from column 4 (aligned, a partial
  // vector at each row's end) and from column 3 (unaligned), transposed.
  for (DType type : types) {
    size_t e = dtype_size(type);
    Shape shape{200, 136};
    auto data = random_bytes(rng, size_t(shape_size(shape)) * e);
    Tensor t = from_host(*device_, type, shape, data.data(), data.size());
    for (int64_t col : {4, 3}) {
      Tensor view = slice_view(t, {8, col}, {188, 129}, {1, 1});
      ShapeAttrs a;
      a.axes = {1, 0};
      Tensor r = run_op(*device_, "transpose", {type, {129, 188}}, {view}, attrs(a));
      auto expected = gather(data, e, 129 * 188, [&](int64_t i) { return (i % 188 + 8) * 136 + (i / 188 + col); });
      ASSERT_EQ(bytes_of(r), expected) << "column " << col << " type " << dtype_name(type);
    }
  }
}

// Strided copies (a transpose that keeps the stride-1 axis last, a reshape of a stepped view,
// a concatenate writing into its output's regions) walk runs of elements on CPU drivers
// (strided_runs) and one element per invocation on GPUs: the other tests run the device's
// loop, this one both on any device.
TEST_F(Shape_, StridedCopiesInRunsAndInTheGpuLoop) {
  for (const char* loops : {"0", "1"}) {
    ScopedTuning gpu_loops("gpu_paths", loops);
    SCOPED_TRACE(std::string("gpu_paths=") + loops);
    const std::pair<Shape, std::vector<int64_t>> cases[] = {
        {{5, 3, 7}, {1, 0, 2}}, {{4, 6, 2, 37}, {2, 0, 1, 3}}, {{40, 3, 2}, {1, 0, 2}}};
    for (DType type : {DType::U8, DType::S16, DType::F32, DType::F64})
      for (const auto& [shape, perm] : cases) {
        auto [got, expected] = transpose_random(type, shape, perm);
        ASSERT_EQ(got, expected) << dtype_name(type) << ", first axis " << shape[0];
      }
    Shape shape{37, 45};
    auto data = random_bytes(rng, size_t(shape_size(shape)) * 4);
    Tensor t = from_host(*device_, DType::S32, shape, data.data(), data.size());
    Tensor view = slice_view(t, {1, 2}, {35, 20}, {1, 2});
    Tensor flat = run_op(*device_, "reshape", {DType::S32, {700}}, {view});
    ASSERT_EQ(bytes_of(flat), gather(data, 4, 700, [&](int64_t i) { return (i / 20 + 1) * 45 + 2 + 2 * (i % 20); }));
    std::vector<Tensor> parts;
    std::vector<std::vector<std::byte>> part_data;
    for (int64_t w : {5, 19, 2}) {
      part_data.push_back(random_bytes(rng, size_t(3 * w) * 2));
      parts.push_back(from_host(*device_, DType::F16, {3, w}, part_data.back().data(), part_data.back().size()));
    }
    ShapeAttrs a;
    a.axis = 1;
    Tensor joined = run_op(*device_, "concatenate", {DType::F16, {3, 26}}, parts, attrs(a));
    std::vector<std::byte> expected;
    for (int64_t r = 0; r < 3; ++r)
      for (size_t k = 0; k < 3; ++k) {
        size_t w = part_data[k].size() / 6;
        expected.insert(expected.end(), part_data[k].begin() + r * w * 2, part_data[k].begin() + (r + 1) * w * 2);
      }
    ASSERT_EQ(bytes_of(joined), expected);
  }
}

TEST_F(Shape_, TransposeOfAView) {  // a slice with steps, transposed: neither side dense
  Shape shape{37, 45};
  auto data = random_bytes(rng, size_t(shape_size(shape)) * 4);
  Tensor t = from_host(*device_, DType::S32, shape, data.data(), data.size());
  Tensor view = slice_view(t, {1, 2}, {35, 40}, {1, 1});
  ShapeAttrs a;
  a.axes = {1, 0};
  Tensor r = run_op(*device_, "transpose", {DType::S32, {40, 35}}, {view}, attrs(a));
  auto expected = gather(data, 4, 40 * 35, [&](int64_t i) { return (i % 35 + 1) * 45 + (i / 35 + 2); });
  EXPECT_EQ(bytes_of(r), expected);
  // reshape of a non-contiguous view copies
  Tensor flat = run_op(*device_, "reshape", {DType::S32, {1400}}, {view});
  auto flat_expected = gather(data, 4, 1400, [&](int64_t i) { return (i / 40 + 1) * 45 + (i % 40 + 2); });
  EXPECT_EQ(bytes_of(flat), flat_expected);
}

// Odd trials take the GPU's loop (gpu_paths), even ones the device's (on CPU drivers,
// runs of 16 output elements); every third has rows longer than a run.
TEST_F(Shape_, ReverseAndPad) {
  for (int trial = 0; trial < 24; ++trial) {
    ScopedTuning gpu_loops("gpu_paths", trial % 2 ? "1" : "0");
    DType type = kTypes[trial % 5];
    bool wide = trial % 3 == 0;
    size_t rank = wide ? 1 + rng() % 2 : 1 + rng() % 4, e = dtype_size(type);
    Shape shape = random_shape(rank, wide ? 40 : 7);
    auto data = random_bytes(rng, size_t(shape_size(shape)) * e);
    Tensor t = from_host(*device_, type, shape, data.data(), data.size());
    ShapeAttrs rev;
    for (size_t d = 0; d < rank; ++d)
      if (rng() % 2) rev.axes.push_back(int64_t(d));
    Tensor r = run_op(*device_, "reverse", {type, shape}, {t}, attrs(rev));
    auto expected = gather(data, e, shape_size(shape), [&](int64_t i) {
      auto c = coords(i, shape);
      for (int64_t ax : rev.axes) c[ax] = shape[ax] - 1 - c[ax];
      return linear(c, shape);
    });
    ASSERT_EQ(bytes_of(r), expected) << "reverse trial " << trial;

    ShapeAttrs pad;
    Shape out_shape(rank);
    for (size_t d = 0; d < rank; ++d) {
      PadAxis p{int64_t(rng() % 5) - 2, int64_t(rng() % 5) - 2, int64_t(rng() % 3)};
      int64_t grown = shape[d] + (shape[d] - 1) * p.interior;
      if (grown + p.low + p.high < 0) p.high = -grown - p.low;
      pad.padding.push_back(p);
      out_shape[d] = grown + p.low + p.high;
    }
    auto value = random_bytes(rng, e);
    Tensor v = from_host(*device_, type, {}, value.data(), e);
    Tensor padded = run_op(*device_, "pad", {type, out_shape}, {t, v}, attrs(pad));
    auto pad_expected = gather(data, e, shape_size(out_shape), [&](int64_t i) -> int64_t {
      auto c = coords(i, out_shape);
      for (size_t d = 0; d < rank; ++d) {
        int64_t x = c[d] - pad.padding[d].low, step = pad.padding[d].interior + 1;
        if (x < 0 || x % step != 0 || x / step >= shape[d]) return -1;
        c[d] = x / step;
      }
      return linear(c, shape);
    }, value);
    ASSERT_EQ(bytes_of(padded), pad_expected) << "pad trial " << trial;
  }
}

TEST_F(Shape_, ConcatenateRandom) {
  for (int trial = 0; trial < 10; ++trial) {
    DType type = kTypes[trial % 5];
    size_t rank = 1 + rng() % 3, e = dtype_size(type);
    int64_t axis = int64_t(rng() % rank);
    Shape shape = random_shape(rank, 6);
    std::vector<std::vector<std::byte>> parts;
    std::vector<Tensor> inputs;
    std::vector<int64_t> lengths;
    Shape out_shape = shape;
    out_shape[axis] = 0;
    for (int k = 0; k < 3; ++k) {
      Shape s = shape;
      s[axis] = int64_t(rng() % 4);  // empty parts too
      parts.push_back(random_bytes(rng, size_t(shape_size(s)) * e));
      inputs.push_back(from_host(*device_, type, s, parts.back().data(), parts.back().size()));
      lengths.push_back(s[axis]);
      out_shape[axis] += s[axis];
    }
    ShapeAttrs a;
    a.axis = axis;
    Tensor r = run_op(*device_, "concatenate", {type, out_shape}, inputs, attrs(a));
    std::vector<std::byte> expected(size_t(shape_size(out_shape)) * e);
    for (int64_t i = 0; i < shape_size(out_shape); ++i) {
      auto c = coords(i, out_shape);
      int k = 0;
      while (c[axis] >= lengths[k]) c[axis] -= lengths[k++];
      Shape s = shape;
      s[axis] = lengths[k];
      std::memcpy(expected.data() + i * e, parts[k].data() + linear(c, s) * e, e);
    }
    ASSERT_EQ(bytes_of(r), expected) << "concatenate trial " << trial;
  }
}

TEST_F(Shape_, StackMixedTypesAndPutSlice) {
  std::vector<int32_t> a{1, -2, 3, 4, 5, 6};
  std::vector<float> b{0.5f, 1.5f, -2.5f, 3.25f, 7.f, 8.f};
  Tensor ta = upload(*device_, DType::S32, {2, 3}, a), tb = upload(*device_, DType::F32, {2, 3}, b);
  ShapeAttrs s;
  s.axis = 2;
  Tensor st = run_op(*device_, "stack", {DType::F32, {2, 3, 2}}, {ta, tb}, attrs(s));
  EXPECT_EQ(download<float>(*device_, st), (std::vector<float>{1, 0.5f, -2, 1.5f, 3, -2.5f, 4, 3.25f, 5, 7, 6, 8}));
  ShapeAttrs p;
  p.starts = {1, 5};  // clamped to {1, 1}, as Nx does
  std::vector<int32_t> slice{9, 10};
  Tensor ts = upload(*device_, DType::S32, {1, 2}, slice);
  Tensor put = run_op(*device_, "put_slice", {DType::F32, {2, 3}}, {tb, ts}, attrs(p));
  EXPECT_EQ(download<float>(*device_, put), (std::vector<float>{0.5f, 1.5f, -2.5f, 3.25f, 9, 10}));
}

// slice and put_slice with start tensors (every index type; negative, out-of-range and huge
// values clamped as Nx clamps them) on transposed inputs, against the host reference; recording
// them waits for nothing.
TEST_F(Shape_, DynamicStartsAreClampedOnTheDevice) {
  const DType index_types[] = {DType::U8, DType::U16, DType::U32, DType::U64, DType::S8, DType::S16, DType::S32, DType::S64};
  auto start_tensor = [&](DType t, int64_t v) {  // v wrapped into t, little-endian
    std::vector<std::byte> b(dtype_size(t));
    std::memcpy(b.data(), &v, b.size());
    return from_host(*device_, t, {}, b.data(), b.size());
  };
  // What Nx makes of v stored as t: its value in t, clamped into [0, limit].
  auto clamped = [](DType t, int64_t v, int64_t limit) -> int64_t {
    size_t w = dtype_size(t) * 8;
    if (is_signed(t)) {
      int64_t x = w == 64 ? v : int64_t(uint64_t(v) << (64 - w)) >> (64 - w);
      return std::clamp<int64_t>(x, 0, limit);
    }
    uint64_t x = w == 64 ? uint64_t(v) : uint64_t(v) & ((1ull << w) - 1);
    return int64_t(std::min<uint64_t>(x, uint64_t(limit)));
  };
  const int64_t values[] = {0, 1, 2, -1, -7, 255, 65535, int64_t(0xFFFFFFFF), int64_t(0x100000002), INT64_MIN, INT64_MAX, 3};
  for (int trial = 0; trial < 24; ++trial) {
    DType type = kTypes[trial % 5];
    size_t e = dtype_size(type);
    size_t rank = 1 + rng() % 3;
    Shape stored = random_shape(rank, 9);
    auto data = random_bytes(rng, size_t(shape_size(stored)) * e);
    Tensor base = from_host(*device_, type, stored, data.data(), data.size());
    std::vector<int64_t> perm = permutation(rank);
    Tensor t = transpose_view(base, perm);
    const Shape& shape = t.shape;
    ShapeAttrs a;
    std::vector<Tensor> starts;
    std::vector<int64_t> want_start(rank);
    a.lengths.resize(rank), a.steps.resize(rank), a.starts.resize(rank);
    Shape out(rank);
    for (size_t d = 0; d < rank; ++d) {
      a.lengths[d] = 1 + int64_t(rng() % shape[d]);
      a.steps[d] = 1 + int64_t(rng() % 2);
      out[d] = (a.lengths[d] + a.steps[d] - 1) / a.steps[d];
      int64_t limit = shape[d] - a.lengths[d];
      if (rng() % 3 == 0) {  // a static start
        a.starts[d] = int64_t(rng() % (shape[d] + 2)) - 1;
        want_start[d] = std::clamp<int64_t>(a.starts[d], 0, limit);
      } else {
        DType it = index_types[rng() % 8];
        int64_t v = values[rng() % std::size(values)];
        a.dynamic_axes.push_back(int64_t(d));
        starts.push_back(start_tensor(it, v));
        want_start[d] = clamped(it, v, limit);
      }
    }
    std::vector<Tensor> inputs{t};
    inputs.insert(inputs.end(), starts.begin(), starts.end());
    uint64_t waits = device_->stream_stats().waits;
    Tensor r = run_op(*device_, "slice", {type, out}, inputs, attrs(a));
    EXPECT_EQ(device_->stream_stats().waits, waits);
    auto in_index = [&](const std::vector<int64_t>& c) {  // logical coordinates -> stored element
      std::vector<int64_t> sc(rank);
      for (size_t d = 0; d < rank; ++d) sc[perm[d]] = c[d];
      return linear(sc, stored);
    };
    auto expected = gather(data, e, shape_size(out), [&](int64_t i) {
      auto c = coords(i, out);
      for (size_t d = 0; d < rank; ++d) c[d] = want_start[d] + c[d] * a.steps[d];
      return in_index(c);
    });
    ASSERT_EQ(bytes_of(r), expected) << "slice trial " << trial << " " << dtype_name(type);
    waits = device_->stream_stats().waits;  // after the download above

    // put_slice of a transposed update at dynamic starts into the (transposed) tensor.
    Shape upd_shape(rank);
    for (size_t d = 0; d < rank; ++d) upd_shape[d] = a.lengths[d];
    Shape upd_stored(upd_shape.rbegin(), upd_shape.rend());
    auto upd = random_bytes(rng, size_t(shape_size(upd_shape)) * e);
    std::vector<int64_t> rev(rank);
    for (size_t d = 0; d < rank; ++d) rev[d] = int64_t(rank - 1 - d);
    Tensor u = transpose_view(from_host(*device_, type, upd_stored, upd.data(), upd.size()), rev);
    std::vector<Tensor> put_inputs{t, u};
    put_inputs.insert(put_inputs.end(), starts.begin(), starts.end());
    ShapeAttrs p;
    p.starts = a.starts, p.dynamic_axes = a.dynamic_axes;
    Tensor put = run_op(*device_, "put_slice", {type, shape}, put_inputs, attrs(p));
    EXPECT_EQ(device_->stream_stats().waits, waits);
    std::vector<std::byte> want_put(size_t(shape_size(shape)) * e);
    for (int64_t i = 0; i < shape_size(shape); ++i) {
      auto c = coords(i, shape);
      bool inside = true;
      std::vector<int64_t> uc(rank);
      for (size_t d = 0; d < rank; ++d) {
        uc[d] = c[d] - want_start[d];
        inside = inside && uc[d] >= 0 && uc[d] < upd_shape[d];
      }
      if (inside) {
        std::vector<int64_t> us(uc.rbegin(), uc.rend());
        std::memcpy(want_put.data() + i * e, upd.data() + linear(us, upd_stored) * e, e);
      } else {
        std::memcpy(want_put.data() + i * e, data.data() + in_index(c) * e, e);
      }
    }
    ASSERT_EQ(bytes_of(put), want_put) << "put_slice trial " << trial << " " << dtype_name(type);
  }
}

// Dynamic starts into a tensor over several buffer chunks (64 KiB chunks here): the kernel
// reaches the sliced tensor (slice's source, put_slice's output) through its chunk table.
// Random starts (out of range too), steps, transposed and offset views, 1- to 16-byte
// elements, against the host reference; no host wait. Over 16 chunks is still refused.
TEST(ShapeChunks, DynamicStartsIntoATensorOverSeveralChunks) {
  std::shared_ptr<Device> dev;
  try {
    dev = Device::open({.max_chunk_bytes = 1 << 16});
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  std::mt19937 rng(sample_seed());
  const DType types[] = {DType::U8, DType::S16, DType::F32, DType::F64, DType::C128};
  for (int trial = 0; trial < 10; ++trial) {
    DType type = types[trial % 5];
    size_t e = dtype_size(type);
    // 150-400 KiB: 3 to 7 chunks, rows straddling chunk boundaries.
    int64_t cols = 37 + int64_t(rng() % 90), rows = int64_t((150 + rng() % 250) * 1024 / (cols * e));
    Shape stored{rows, cols};
    auto data = random_bytes(rng, size_t(rows * cols) * e);
    Tensor base = from_host(*dev, type, stored, data.data(), data.size());
    // A view: rows from `skip` (an offset into a later chunk for some), transposed or not.
    int64_t skip = int64_t(rng() % (rows / 2));
    bool transposed = trial % 2 == 1;
    Tensor t = slice_view(base, {skip, 0}, {rows - skip, cols}, {1, 1});
    if (transposed) t = transpose_view(t, {1, 0});
    auto stored_index = [&](int64_t r, int64_t c) {  // view coordinates -> stored element
      return transposed ? (c + skip) * cols + r : (r + skip) * cols + c;
    };
    const Shape shape = t.shape;
    ShapeAttrs a;
    a.starts = {0, 0}, a.lengths = {1 + int64_t(rng() % shape[0]), 1 + int64_t(rng() % shape[1])};
    a.steps = {1 + int64_t(rng() % 3), 1};
    a.dynamic_axes = {0, 1};
    int64_t want[2], given[2];
    std::vector<Tensor> starts;
    for (int d = 0; d < 2; ++d) {
      int64_t limit = shape[d] - a.lengths[d];
      given[d] = int64_t(rng() % uint64_t(shape[d] + 20)) - 10;
      want[d] = std::clamp<int64_t>(given[d], 0, limit);
      starts.push_back(upload(*dev, DType::S32, {}, std::vector<int32_t>{int32_t(given[d])}));
    }
    Shape out{(a.lengths[0] + a.steps[0] - 1) / a.steps[0], a.lengths[1]};
    Attrs at = Attrs::of(a);
    Support native = check_op(*dev, OpId::slice, OutSpec{type, out},
                              std::vector<TensorSpec>{spec_of(t), spec_of(starts[0]), spec_of(starts[1])}, at);
    if (!native && native.reason.find("lacks") != std::string::npos) continue;  // type turned off
    ASSERT_TRUE(native) << native.reason;
    uint64_t waits = dev->stream_stats().waits;
    Tensor r = run_op(*dev, "slice", {type, out}, {t, starts[0], starts[1]}, at);
    EXPECT_EQ(dev->stream_stats().waits, waits);
    auto expected = gather(data, e, shape_size(out), [&](int64_t i) {
      return stored_index(want[0] + (i / out[1]) * a.steps[0], want[1] + i % out[1]);
    });
    std::vector<std::byte> got(expected.size());
    to_host(*dev, r, got.data(), got.size());
    ASSERT_EQ(got, expected) << "slice trial " << trial << " " << dtype_name(type) << " " << rows << "x" << cols;

    // put_slice of a small update into the untransposed view (put_slice first copies its
    // input, and strided copies do not span chunks), a fresh output over several chunks.
    Tensor target = transposed ? slice_view(base, {skip, 0}, {rows - skip, cols}, {1, 1}) : t;
    const Shape tshape = target.shape;
    Shape upd_shape{std::min(a.lengths[0], tshape[0]), std::min(a.lengths[1], tshape[1])};
    if (shape_size(upd_shape) * int64_t(e) > (1 << 16)) upd_shape[0] = std::max<int64_t>(1, (1 << 16) / (upd_shape[1] * e));
    for (int d = 0; d < 2; ++d) want[d] = std::clamp<int64_t>(given[d], 0, tshape[d] - upd_shape[d]);
    auto upd = random_bytes(rng, size_t(shape_size(upd_shape)) * e);
    Tensor u = from_host(*dev, type, upd_shape, upd.data(), upd.size());
    ShapeAttrs p;
    p.starts = {0, 0}, p.dynamic_axes = {0, 1};
    waits = dev->stream_stats().waits;
    Tensor put = run_op(*dev, "put_slice", {type, tshape}, {target, u, starts[0], starts[1]}, Attrs::of(p));
    EXPECT_EQ(dev->stream_stats().waits, waits);
    auto want_put = gather(data, e, shape_size(tshape), [&](int64_t i) { return (i / tshape[1] + skip) * cols + i % tshape[1]; });
    for (int64_t i = 0; i < shape_size(upd_shape); ++i) {
      int64_t r0 = want[0] + i / upd_shape[1], c0 = want[1] + i % upd_shape[1];
      std::memcpy(want_put.data() + (r0 * tshape[1] + c0) * e, upd.data() + i * e, e);
    }
    std::vector<std::byte> got_put(want_put.size());
    to_host(*dev, put, got_put.data(), got_put.size());
    ASSERT_EQ(got_put, want_put) << "put_slice trial " << trial << " " << dtype_name(type);
  }
  // Seventeen chunks: beyond the kernel's table, refused (the host runs it).
  std::vector<int32_t> v(17 * 16384 + 5);
  Tensor big = upload(*dev, DType::S32, {int64_t(v.size())}, v);
  Tensor start = upload(*dev, DType::S16, {}, std::vector<int16_t>{3});
  ShapeAttrs a;
  a.starts = {0}, a.lengths = {10}, a.steps = {1}, a.dynamic_axes = {0};
  Support s = check_op(*dev, OpId::slice, OutSpec{DType::S32, {10}}, std::vector<TensorSpec>{spec_of(big), spec_of(start)},
                       Attrs::of(a));
  EXPECT_FALSE(s);
  EXPECT_EQ(s.kind, ErrorKind::Unsupported);
}

TEST_F(Shape_, IotaAndEye) {
  ShapeAttrs along;
  along.axis = 1;
  Tensor i = run_op(*device_, "iota", {DType::F32, {3, 300, 2}}, {}, attrs(along));
  auto iv = download<float>(*device_, i);
  for (int64_t k = 0; k < 1800; ++k) ASSERT_EQ(iv[k], float((k / 2) % 300)) << k;
  Tensor flat = run_op(*device_, "iota", {DType::S32, {5, 7}}, {}, attrs(ShapeAttrs{}));
  auto fv = download<int32_t>(*device_, flat);
  for (int32_t k = 0; k < 35; ++k) ASSERT_EQ(fv[k], k);
  Tensor wrap = run_op(*device_, "iota", {DType::U8, {300}}, {}, attrs(ShapeAttrs{}));
  auto wv = download<uint8_t>(*device_, wrap);
  for (int k = 0; k < 300; ++k) ASSERT_EQ(wv[k], uint8_t(k));
  Tensor eye = run_op(*device_, "eye", {DType::F64, {2, 3, 4}}, {}, attrs(ShapeAttrs{}));
  auto ev = download<double>(*device_, eye);
  for (int64_t k = 0; k < 24; ++k) ASSERT_EQ(ev[k], (k / 4) % 3 == k % 4 ? 1.0 : 0.0) << k;
  ShapeAttrs c;
  c.value.kind = AttrNumber::Kind::Float, c.value.re = -2.5;
  Tensor fill = run_op(*device_, "constant", {DType::F16, {1000}}, {}, attrs(c));
  auto cv = download<uint16_t>(*device_, fill);
  for (auto x : cv) ASSERT_EQ(x, f32_to_f16_bits(-2.5f));
}

TEST_F(Shape_, BadRequestsAreInvalidArguments) {
  std::vector<float> v(6);
  Tensor t = upload(*device_, DType::F32, {2, 3}, v);
  try {
    run_op(*device_, "reshape", {DType::F32, {4, 2}}, {t});
    FAIL() << "reshape to a different size ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
  ShapeAttrs a;
  a.axes = {0, 0};
  EXPECT_FALSE(check_op(*device_, OpId::transpose, {DType::F32, {2, 3}}, std::vector<TensorSpec>{spec_of(t)}, attrs(a)));
}

}  // namespace
