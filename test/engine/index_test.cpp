// The index family against a host reference written from Nx's definitions: gather with axes
// (every element size, transposed inputs, u8/s64 indices), take, take_along_axis,
// indexed_add (duplicates: integers exact with wrap-around, f32 summed in double per target
// then rounded once, as Nx.BinaryBackend does) and indexed_put (the last duplicate wins);
// out-of-range indices clamp in gathers and drop the row in scatters.
#include <cstring>
#include <random>

#include "ops/index/index_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

Attrs axes_attrs(std::vector<int64_t> axes) {
  IndexAttrs a;
  a.axes = std::move(axes);
  return Attrs::of(a);
}

Attrs axis_attrs(int64_t axis) {
  IndexAttrs a;
  a.axis = axis;
  return Attrs::of(a);
}

class Index : public DeviceTest {
 protected:
  std::mt19937 rng{sample_seed() + 7};
};

TEST_F(Index, GatherWithAxesEveryElementSize) {
  const DType types[] = {DType::U8, DType::F16, DType::F32, DType::F64, DType::C128};
  for (int trial = 0; trial < 10; ++trial) {
    DType type = types[trial % 5];
    size_t e = dtype_size(type);
    Shape shape{int64_t(2 + rng() % 4), int64_t(1 + rng() % 5), int64_t(1 + rng() % 6)};
    std::vector<int64_t> axes = trial % 2 ? std::vector<int64_t>{2, 0} : std::vector<int64_t>{1};
    int64_t rows = 1 + int64_t(rng() % 7);
    std::vector<int64_t> idx;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t ax : axes) idx.push_back(int64_t(rng() % (shape[ax] + 2)) - 1);  // -1 and dim: clamped
    std::vector<std::byte> data(size_t(shape_size(shape)) * e);
    for (auto& b : data) b = std::byte(rng() & 0xff);
    Tensor t = from_host(*device_, type, shape, data.data(), data.size());
    Tensor ti = upload(*device_, DType::S64, {rows, int64_t(axes.size())}, idx);
    Shape rest;
    std::vector<int64_t> rest_axes;
    for (int64_t d = 0; d < 3; ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) rest.push_back(shape[d]), rest_axes.push_back(d);
    Shape out{rows};
    out.insert(out.end(), rest.begin(), rest.end());
    Tensor r = run_op(*device_, "gather", {type, out}, {t, ti}, axes_attrs(axes));
    std::vector<std::byte> got(size_t(shape_size(out)) * e);
    to_host(*device_, r, got.data(), got.size());
    for (int64_t i = 0; i < shape_size(out); ++i) {
      auto oc = coords(i, out);
      std::vector<int64_t> c(3);
      for (size_t k = 0; k < axes.size(); ++k)
        c[axes[k]] = std::clamp<int64_t>(idx[oc[0] * axes.size() + k], 0, shape[axes[k]] - 1);
      for (size_t k = 0; k < rest_axes.size(); ++k) c[rest_axes[k]] = oc[k + 1];
      ASSERT_EQ(std::memcmp(got.data() + i * e, data.data() + linear(c, shape) * e, e), 0)
          << "trial " << trial << " element " << i;
    }
  }
}

TEST_F(Index, TakeAndTakeAlongAxis) {
  std::vector<float> v(3 * 4 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  Tensor t = upload(*device_, DType::F32, {3, 4, 5}, v);
  Tensor view = transpose_view(t, {0, 2, 1});  // {3, 5, 4}, not contiguous
  std::vector<uint8_t> idx{3, 0, 0, 2, 1, 9};  // 9 clamps to 3
  Tensor ti = upload(*device_, DType::U8, {2, 3}, idx);
  Tensor r = run_op(*device_, "take", {DType::F32, {3, 5, 2, 3}}, {view, ti}, axis_attrs(2));
  auto got = download<float>(*device_, r);
  for (int64_t i = 0; i < 90; ++i) {
    auto c = coords(i, {3, 5, 2, 3});
    int64_t k = std::min<int64_t>(idx[c[2] * 3 + c[3]], 3);
    ASSERT_EQ(got[i], v[c[0] * 20 + k * 5 + c[1]]) << i;
  }
  std::vector<int32_t> along(3 * 2 * 5);
  for (auto& x : along) x = int32_t(rng() % 4);
  Tensor ta = upload(*device_, DType::S32, {3, 2, 5}, along);
  Tensor s = run_op(*device_, "take_along_axis", {DType::F32, {3, 2, 5}}, {t, ta}, axis_attrs(1));
  auto sv = download<float>(*device_, s);
  for (int64_t i = 0; i < 30; ++i) {
    auto c = coords(i, {3, 2, 5});
    ASSERT_EQ(sv[i], v[c[0] * 20 + along[i] * 5 + c[2]]) << i;
  }
}

// Gathers whose output spans buffer chunks (64 KiB chunks here): one launch per chunk, every
// word in its place, for 16-byte words (take of rows), 2-byte elements (gather) and
// take_along_axis.
TEST(IndexChunks, GatherOutputsSpanChunks) {
  std::shared_ptr<Device> dev;
  try {
    dev = Device::open({.max_chunk_bytes = 1 << 16});
  } catch (const std::exception& e) {
    GTEST_SKIP() << e.what();
  }
  std::mt19937 rng(sample_seed() + 11);
  std::vector<float> table(1000 * 16);
  for (size_t i = 0; i < table.size(); ++i) table[i] = float(i);
  Tensor t = upload(*dev, DType::F32, {1000, 16}, table);  // 64000 bytes: one chunk
  std::vector<int32_t> idx(3001);
  for (auto& x : idx) x = int32_t(rng() % 1002) - 1;  // -1 and 1000 clamp
  Tensor ti = upload(*dev, DType::S32, {3001}, idx);
  auto got = download<float>(*dev, run_op(*dev, "take", {DType::F32, {3001, 16}}, {t, ti}, axis_attrs(0)));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], table[size_t(std::clamp(idx[i / 16], 0, 999)) * 16 + i % 16]) << i;

  std::vector<uint16_t> h(250 * 3);  // slices of 3 u16: moved as 2-byte words
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i * 7);
  Tensor th = upload(*dev, DType::U16, {250, 3}, h);
  std::vector<uint8_t> gi(20000);
  for (auto& x : gi) x = uint8_t(rng() % 256);  // 250..255 clamp
  Tensor tg = upload(*dev, DType::U8, {20000, 1}, gi);  // output 120000 bytes
  auto g = download<uint16_t>(*dev, run_op(*dev, "gather", {DType::U16, {20000, 3}}, {th, tg}, axes_attrs({0})));
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], h[size_t(std::min<uint8_t>(gi[i / 3], 249)) * 3 + i % 3]) << i;

  std::vector<float> rows(2000 * 8);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = float(i) + 0.5f;
  Tensor tr = upload(*dev, DType::F32, {2000, 8}, rows);  // 64000 bytes
  std::vector<uint8_t> along(2000 * 20);
  for (auto& x : along) x = uint8_t(rng() % 9);  // 8 clamps
  Tensor ta = upload(*dev, DType::U8, {2000, 20}, along);  // output 160000 bytes
  auto s = download<float>(*dev, run_op(*dev, "take_along_axis", {DType::F32, {2000, 20}}, {tr, ta}, axis_attrs(1)));
  for (size_t i = 0; i < s.size(); ++i) ASSERT_EQ(s[i], rows[(i / 20) * 8 + std::min<uint8_t>(along[i], 7)]) << i;
}

TEST_F(Index, IndexedAddSumsDuplicatesAsNxDoes) {
  // integers: exact, wrapping in the output type
  std::vector<uint8_t> target{250, 1, 2, 3, 4};
  std::vector<int32_t> idx{0, 0, 3, 7, -1, 0};  // 7 and -1 are out of range: dropped
  std::vector<uint8_t> upd{3, 5, 9, 100, 100, 1};
  Tensor r = run_op(*device_, "indexed_add", {DType::U8, {5}},
                    {upload(*device_, DType::U8, {5}, target), upload(*device_, DType::S32, {6, 1}, idx),
                     upload(*device_, DType::U8, {6}, upd)},
                    axes_attrs({0}));
  EXPECT_EQ(download<uint8_t>(*device_, r), (std::vector<uint8_t>{3, 1, 2, 12, 4}));
  // f32: each target's updates summed in double, then added and rounded once
  Shape shape{6, 3};
  std::vector<float> tf(18), uf(40 * 3);
  std::vector<int64_t> rows(40);
  for (auto& x : tf) x = float(int(rng() % 2000) - 1000) * 0.37f;
  for (auto& x : uf) x = float(int(rng() % 2000) - 1000) * 1e-3f + 1e4f;
  for (auto& x : rows) x = int64_t(rng() % 6);
  std::vector<double> sums(18, 0.0);
  std::vector<bool> touched(18, false);
  for (size_t n = 0; n < rows.size(); ++n)
    for (int q = 0; q < 3; ++q) sums[rows[n] * 3 + q] += double(uf[n * 3 + q]), touched[rows[n] * 3 + q] = true;
  Tensor rf = run_op(*device_, "indexed_add", {DType::F32, shape},
                     {upload(*device_, DType::F32, shape, tf), upload(*device_, DType::S64, {40, 1}, rows),
                      upload(*device_, DType::F32, {40, 3}, uf)},
                     axes_attrs({0}));
  auto got = download<float>(*device_, rf);
  for (int i = 0; i < 18; ++i) ASSERT_EQ(got[i], touched[i] ? float(double(tf[i]) + sums[i]) : tf[i]) << i;
}

TEST_F(Index, IndexedPutLastDuplicateWinsOnATransposedTarget) {
  std::vector<int32_t> v(12);
  for (int i = 0; i < 12; ++i) v[i] = i;
  Tensor t = transpose_view(upload(*device_, DType::S32, {4, 3}, v), {1, 0});  // {3, 4}
  std::vector<int32_t> idx{1, 1, 3, 1, 9};  // rows: {1}, {1}, {3}, {1}, {9} along axis 1
  std::vector<int32_t> upd{100, 101, 102, 200, 201, 202, 300, 301, 302, 400, 401, 402, 9, 9, 9};
  Tensor r = run_op(*device_, "indexed_put", {DType::S32, {3, 4}},
                    {t, upload(*device_, DType::S32, {5, 1}, idx), upload(*device_, DType::S32, {5, 3}, upd)},
                    axes_attrs({1}));
  auto got = download<int32_t>(*device_, r);
  // t[i][j] = v[j * 3 + i]; column 1 gets the last row aimed at it (400..402), column 3 gets 300..302.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      int32_t want = j == 1 ? 400 + i : j == 3 ? 300 + i : v[j * 3 + i];
      ASSERT_EQ(got[i * 4 + j], want) << i << "," << j;
    }
}

}  // namespace
