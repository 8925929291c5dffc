// The window family on fresh random inputs against a host reference written from Nx's
// definitions: window_sum/max/min/product over strides, padding (negative too), dilations,
// windows that unroll and ones that loop, pass-through axes that merge, a transposed view;
// window_scatter_max/min with ties (small integers) and padding. Values are small integers
// (and NaN, infinities for max/min), so results are exact and compared bit for bit.
#include <bit>
#include <cstring>
#include <functional>
#include <limits>

#include "ops/window/window_attrs.hpp"
#include "test_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct WindowCase {
  std::string name;
  Shape shape;
  WindowAttrs attrs;
  bool transposed = false;  // the op sees the transpose of a stored {shape reversed} tensor
};

std::vector<WindowCase> cases() {
  using P = std::vector<std::pair<int64_t, int64_t>>;
  return {
      {"pool_3x3_same", {2, 3, 9, 11}, {{1, 1, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1}, P{{0, 0}, {0, 0}, {1, 1}, {1, 1}}}},
      {"pool_2x2_stride_2", {3, 4, 8, 6}, {{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 1, 1}, P{{0, 0}, {0, 0}, {0, 0}, {0, 0}}}},
      {"dilated_negative_padding", {5, 13}, {{2, 3}, {2, 1}, {2, 2}, P{{1, -1}, {-2, 3}}}},
      {"long_1d_window_looped", {300}, {{70}, {3}, {1}, P{{5, 5}}}},
      {"transposed_view", {7, 6}, {{3, 2}, {1, 2}, {1, 1}, P{{1, 1}, {0, 1}}}, true},
      {"straddles_workgroups", {1029}, {{4}, {1}, {1}, P{{2, 1}}}},
      // blocks of 4x4 outputs (max, min), SAME and VALID, the last block row partial
      {"pool_3x3_same_blocks", {3, 10, 16}, {{1, 3, 3}, {1, 1, 1}, {1, 1, 1}, P{{0, 0}, {1, 1}, {1, 1}}}},
      {"pool_3x2_valid_blocks", {2, 9, 16}, {{1, 3, 2}, {1, 1, 1}, {1, 1, 1}, P{{0, 0}, {0, 0}, {0, 1}}}},
  };
}

int64_t windows_along(int64_t in, std::pair<int64_t, int64_t> pad, int64_t win, int64_t stride, int64_t dil) {
  int64_t padded = in + pad.first + pad.second, span = (win - 1) * dil + 1;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

// Calls f(out_coords) for every coordinate of `shape`, row-major.
void each(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t n = shape_size(shape);
  std::vector<int64_t> c(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(c);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
}

float value_at(const std::vector<float>& data, const Shape& shape, const std::vector<int64_t>& c, bool& inside) {
  int64_t off = 0;
  inside = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (c[d] < 0 || c[d] >= shape[d]) inside = false;
    off = off * shape[d] + c[d];
  }
  return inside ? data[size_t(off)] : 0.0f;
}

class Window : public DeviceTest {};

// Uploads `logical` (row-major over `shape`) as the op will see it: contiguous, or as the
// transpose of its transpose.
Tensor upload_as(Device& d, const std::vector<float>& logical, const Shape& shape, bool transposed) {
  if (!transposed) return from_host(d, DType::F32, shape, logical.data(), logical.size() * 4);
  Shape stored{shape[1], shape[0]};
  std::vector<float> t(logical.size());
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) t[size_t(j * shape[0] + i)] = logical[size_t(i * shape[1] + j)];
  return transpose_view(from_host(d, DType::F32, stored, t.data(), t.size() * 4), {1, 0});
}

TEST_F(Window, ReductionsMatchTheHostReferenceBitForBit) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed());
  std::uniform_int_distribution<int> small(-6, 6), pick(0, 40);
  std::string failures;
  for (const auto& c : cases()) {
    for (const char* op : {"window_sum", "window_max", "window_min", "window_product"}) {
      std::string name = std::string(op);
      bool extreme = name == "window_max" || name == "window_min";
      std::vector<float> x(size_t(shape_size(c.shape)));
      for (auto& v : x) {
        int k = pick(rng);
        v = name == "window_product" ? (k < 20 ? 1.0f : -1.0f) : float(small(rng));
        if (extreme && k == 0) v = std::numeric_limits<float>::quiet_NaN();
        if (extreme && k == 1) v = -INFINITY;
      }
      const auto& w = c.attrs;
      Shape out;
      for (size_t a = 0; a < c.shape.size(); ++a)
        out.push_back(windows_along(c.shape[a], w.padding[a], w.dims[a], w.strides[a], w.dilations[a]));
      std::vector<float> expected;
      float ident = name == "window_sum" ? 0.0f : name == "window_product" ? 1.0f
                    : name == "window_max" ? -INFINITY : INFINITY;
      each(out, [&](const std::vector<int64_t>& oc) {
        float acc = ident;
        each(Shape(w.dims.begin(), w.dims.end()), [&](const std::vector<int64_t>& k) {
          std::vector<int64_t> ic(oc.size());
          for (size_t a = 0; a < oc.size(); ++a) ic[a] = oc[a] * w.strides[a] - w.padding[a].first + k[a] * w.dilations[a];
          bool inside;
          float v = value_at(x, c.shape, ic, inside);
          if (!inside) v = ident;
          if (name == "window_sum") acc = v + acc;
          else if (name == "window_product") acc = v * acc;
          else if (std::isnan(v) || std::isnan(acc)) acc = std::numeric_limits<float>::quiet_NaN();
          else acc = name == "window_max" ? std::max(v, acc) : std::min(v, acc);
        });
        expected.push_back(acc);
      });
      Tensor input = upload_as(d, x, c.shape, c.transposed);
      std::vector<float> got;
      try {
        got = download<float>(d, run_op(d, op, OutSpec{DType::F32, out}, {input}, Attrs::of(w)));
      } catch (const std::exception& e) {
        failures += c.name + " " + name + ": threw " + e.what() + "\n";
        continue;
      }
      size_t bad = 0;
      for (size_t i = 0; i < expected.size(); ++i)
        if (!(std::isnan(got[i]) && std::isnan(expected[i])) && std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i]) &&
            !(got[i] == 0.0f && expected[i] == 0.0f && extreme))
          ++bad;
      if (bad) failures += c.name + " " + name + ": " + std::to_string(bad) + " of " + std::to_string(expected.size()) + " differ\n";
    }
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

TEST_F(Window, ScatterMatchesTheHostReferenceBitForBit) {
  Device& d = *device_;
  std::mt19937 rng(sample_seed() + 1);
  std::uniform_int_distribution<int> small(-3, 3);
  std::string failures;
  for (const auto& c : cases()) {
    WindowAttrs w = c.attrs;
    bool negative = false;
    for (auto& p : w.padding) negative = negative || p.first < 0 || p.second < 0;
    if (negative) continue;  // Nx pads scatter inputs with the init value: no cropping
    w.dilations.assign(w.dims.size(), 1);
    for (const char* op : {"window_scatter_max", "window_scatter_min"}) {
      bool max = std::string(op) == "window_scatter_max";
      std::vector<float> x(size_t(shape_size(c.shape)));
      for (auto& v : x) v = float(small(rng));
      Shape windows;
      for (size_t a = 0; a < c.shape.size(); ++a) windows.push_back(windows_along(c.shape[a], w.padding[a], w.dims[a], w.strides[a], 1));
      std::vector<float> source(size_t(shape_size(windows)));
      for (auto& v : source) v = float(small(rng) + 4);
      float init = 0.5f;
      std::vector<float> expected(x.size(), init);
      size_t wi = 0;
      each(windows, [&](const std::vector<int64_t>& wc) {
        float pick_v = 0;
        int64_t pick = -1;
        bool first = true;
        each(Shape(w.dims.begin(), w.dims.end()), [&](const std::vector<int64_t>& k) {
          std::vector<int64_t> ic(wc.size());
          int64_t off = 0;
          for (size_t a = 0; a < wc.size(); ++a) {
            ic[a] = wc[a] * w.strides[a] - w.padding[a].first + k[a];
            off = off * c.shape[a] + ic[a];
          }
          bool inside;
          float v = value_at(x, c.shape, ic, inside);
          if (!inside) v = init;
          if (first || (max ? v >= pick_v : v <= pick_v)) pick_v = v, pick = inside ? off : -1;
          first = false;
        });
        if (pick >= 0) expected[size_t(pick)] = source[wi] + expected[size_t(pick)];
        ++wi;
      });
      Tensor input = upload_as(d, x, c.shape, c.transposed);
      Tensor src = upload_as(d, source, windows, c.transposed);  // a transposed source too
      Tensor init_t = from_host(d, DType::F32, {}, &init, 4);
      std::vector<float> got;
      try {
        got = download<float>(d, run_op(d, op, OutSpec{DType::F32, c.shape}, {input, src, init_t}, Attrs::of(w)));
      } catch (const std::exception& e) {
        failures += c.name + " " + op + ": threw " + e.what() + "\n";
        continue;
      }
      size_t bad = 0;
      for (size_t i = 0; i < expected.size(); ++i) bad += got[i] != expected[i];
      if (bad) failures += c.name + " " + op + ": " + std::to_string(bad) + " of " + std::to_string(expected.size()) + " differ\n";
    }
  }
  EXPECT_TRUE(failures.empty()) << failures;
}

}  // namespace
