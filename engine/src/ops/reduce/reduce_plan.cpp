#include "ops/reduce/reduce_plan.hpp"

#include <algorithm>

namespace nxv {
namespace {

constexpr uint32_t kMaxThreadsPerRow = 256;  // the kernel's workgroup size
constexpr uint64_t kElementsPerThread = 16;  // below this a row is not shared further
constexpr uint64_t kMinChunkPerThread = 64;  // elements each invocation folds in a chunk
constexpr uint32_t kMaxLanesApart = 32;      // invocations sharing a column: 8 columns or more a group
constexpr uint64_t kColumnRowsPerLane = 8;   // rows each of them folds, at least

// Axes of one kind, adjacent in `view`, as one extent and stride; nullopt when they do not
// collapse (a strided or transposed view).
std::optional<std::pair<uint64_t, uint64_t>> collapse(const Tensor& view, const std::vector<size_t>& axes) {
  if (axes.empty()) return std::pair<uint64_t, uint64_t>{1, 0};
  uint64_t extent = 1;
  int64_t stride = view.strides[axes.back()];
  for (size_t k = axes.size(); k-- > 0;) {
    size_t a = axes[k];
    if (view.strides[a] != stride * int64_t(extent)) return std::nullopt;
    extent *= uint64_t(view.shape[a]);
  }
  if (stride < 0) return std::nullopt;
  return std::pair<uint64_t, uint64_t>{extent, uint64_t(stride)};
}

uint32_t threads_per_row(uint64_t reduced, uint64_t inner) {
  if (inner > 1) return 1;  // neighbouring invocations take neighbouring columns instead
  uint32_t t = 1;
  while (t < kMaxThreadsPerRow && t * kElementsPerThread < reduced) t <<= 1;
  return t;
}

ReducePass single_pass(const ReduceGeometry& g) {
  ReducePass p{g};
  p.threads_per_row = threads_per_row(g.reduced, g.inner);
  p.chunk_len = std::max<uint64_t>(g.reduced, 1);
  return p;
}

}  // namespace

std::optional<ReduceGeometry> reduce_geometry(const Tensor& view, const std::vector<bool>& reduced_axes) {
  // Size-1 axes are neither here nor there; the rest must read kept* reduced* kept*.
  std::vector<size_t> before, reduced, after;
  for (size_t a = 0; a < view.shape.size(); ++a) {
    if (view.shape[a] == 1) continue;
    if (reduced_axes[a]) {
      if (!after.empty()) return std::nullopt;
      reduced.push_back(a);
    } else {
      (reduced.empty() ? before : after).push_back(a);
    }
  }
  if (reduced.empty()) {  // nothing to fold: every element is its own row
    after.insert(after.begin(), before.begin(), before.end());
    before.clear();
  }
  auto o = collapse(view, before), r = collapse(view, reduced), i = collapse(view, after);
  if (!o || !r || !i) return std::nullopt;
  ReduceGeometry g;
  g.outer = o->first, g.outer_stride = o->second;
  g.reduced = r->first, g.reduced_stride = r->second;
  g.inner = i->first, g.inner_stride = i->second;
  // An empty reduced extent still gives rows (of identities) when the kept axes are not empty.
  if (view.size() == 0) {
    uint64_t kept = 1, red = 1;
    for (size_t a = 0; a < view.shape.size(); ++a) (reduced_axes[a] ? red : kept) *= uint64_t(view.shape[a]);
    g = ReduceGeometry{kept, red, 1, red, 1, 0};
  }
  return g;
}

Tensor kept_first_view(const Tensor& view, const std::vector<bool>& reduced_axes) {
  std::vector<int64_t> order;
  for (size_t a = 0; a < view.shape.size(); ++a)
    if (!reduced_axes[a]) order.push_back(int64_t(a));
  for (size_t a = 0; a < view.shape.size(); ++a)
    if (reduced_axes[a]) order.push_back(int64_t(a));
  Tensor t = view;
  for (size_t k = 0; k < order.size(); ++k) {
    t.shape[k] = view.shape[size_t(order[k])];
    t.strides[k] = view.strides[size_t(order[k])];
  }
  return t;
}

std::vector<ReducePass> plan_reduce_passes(const ReduceGeometry& g, uint64_t target_threads, uint32_t workgroup_size,
                                           bool lanes_apart_ok) {
  ReducePass first = single_pass(g);
  uint64_t tpr = first.threads_per_row;
  uint64_t threads = g.outer * g.inner * tpr;
  if (threads == 0 || threads >= target_threads || g.reduced < 2 * tpr * kMinChunkPerThread) return {first};
  // Columns short enough that the group folds each in shares of at most 64 rows: one pass, the group
  // combining its shares (two passes would each wait on memory, with a barrier between).
  uint32_t lanes_max = std::min(kMaxLanesApart, workgroup_size);
  if (lanes_apart_ok && g.inner > 1 && g.reduced <= uint64_t(lanes_max) * kMinChunkPerThread) {
    uint32_t lanes = 2;
    while (lanes < lanes_max && uint64_t(lanes) * kColumnRowsPerLane < g.reduced) lanes <<= 1;
    first.threads_per_row = lanes;
    first.lanes_apart = true;
    return {first};
  }
  uint64_t chunks = std::min((target_threads + threads - 1) / threads, g.reduced / (tpr * kMinChunkPerThread));
  uint64_t step = 4 * tpr;  // whole trips of the kernel's four-way loop
  uint64_t len = (g.reduced + chunks - 1) / chunks;
  len = (len + step - 1) / step * step;
  chunks = (g.reduced + len - 1) / len;
  if (chunks <= 1) return {first};
  first.chunks = chunks;
  first.chunk_len = len;
  ReduceGeometry partials{g.outer, chunks, g.inner, chunks * g.inner, g.inner, 1};
  return {first, single_pass(partials)};
}

}  // namespace nxv
