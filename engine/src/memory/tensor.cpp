// Tensor geometry and zero-copy views.
#include <numeric>
#include <string>

#include "nxv/error.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

std::string shape_text(const Shape& s) {
  std::string out = "{";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorKind::InvalidArgument, "negative dimension in shape " + shape_text(shape));
    n *= d;
  }
  return n;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

int64_t Tensor::size() const { return shape_size(shape); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Tensor broadcast_view(const Tensor& t, const Shape& shape, const std::vector<int64_t>& axes_in) {
  std::vector<int64_t> axes = axes_in;
  if (axes.empty() && !t.shape.empty()) {
    if (t.shape.size() > shape.size())
      throw Error(ErrorKind::InvalidArgument, "cannot broadcast " + shape_text(t.shape) + " to " + shape_text(shape));
    for (size_t i = 0; i < t.shape.size(); ++i) axes.push_back(int64_t(shape.size() - t.shape.size() + i));
  }
  if (axes.size() != t.shape.size())
    throw Error(ErrorKind::InvalidArgument, "broadcast axes do not match the input's rank");
  Tensor out = t;
  out.shape = shape;
  out.strides.assign(shape.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0 || a >= int64_t(shape.size()) || (t.shape[i] != 1 && t.shape[i] != shape[a]))
      throw Error(ErrorKind::InvalidArgument, "cannot broadcast " + shape_text(t.shape) + " to " + shape_text(shape));
    out.strides[a] = t.shape[i] == 1 ? 0 : t.strides[i];
  }
  return out;
}

Tensor transpose_view(const Tensor& t, const std::vector<int64_t>& axes) {
  if (axes.size() != t.shape.size()) throw Error(ErrorKind::InvalidArgument, "transpose axes do not match the rank");
  Tensor out = t;
  std::vector<bool> seen(axes.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0 || a >= int64_t(axes.size()) || seen[a]) throw Error(ErrorKind::InvalidArgument, "invalid transpose axes");
    seen[a] = true;
    out.shape[i] = t.shape[a];
    out.strides[i] = t.strides[a];
  }
  return out;
}

Tensor slice_view(const Tensor& t, const std::vector<int64_t>& start, const std::vector<int64_t>& lengths,
                  const std::vector<int64_t>& steps) {
  size_t r = t.shape.size();
  if (start.size() != r || lengths.size() != r || steps.size() != r)
    throw Error(ErrorKind::InvalidArgument, "slice start/lengths/strides must match the rank");
  Tensor out = t;
  for (size_t i = 0; i < r; ++i) {
    if (steps[i] < 1 || lengths[i] < 0 || start[i] < 0 ||
        (lengths[i] > 0 && start[i] + (lengths[i] - 1) * steps[i] >= t.shape[i]))
      throw Error(ErrorKind::InvalidArgument, "slice out of bounds on axis " + std::to_string(i));
    if (lengths[i] > 0) out.offset += start[i] * t.strides[i];
    out.shape[i] = lengths[i];
    out.strides[i] = t.strides[i] * steps[i];
  }
  return out;
}

Tensor reshape_view(const Tensor& t, const Shape& shape) {
  if (shape_size(shape) != t.size())
    throw Error(ErrorKind::InvalidArgument, "cannot reshape " + shape_text(t.shape) + " to " + shape_text(shape));
  if (!t.is_contiguous()) throw Error(ErrorKind::InvalidArgument, "reshape_view needs a contiguous tensor");
  Tensor out = t;
  out.shape = shape;
  out.strides = row_major_strides(shape);
  return out;
}

}  // namespace nxv
