// Attributes of the sort family's ops (sort, argsort), decoded once from the callback's options.
#pragma once
#include <cstdint>

namespace nxv {

// `axis`, `direction: :asc | :desc` and, for argsort, `stable` (every sort here is stable, as
// Nx.BinaryBackend's is, so the flag changes nothing). argsort's index type is its output type.
// top_k: `k`, along the last axis, descending.
struct SortAttrs {
  int64_t axis = 0;
  bool descending = false;
  bool stable = false;
  int64_t k = 0;
};

}  // namespace nxv
