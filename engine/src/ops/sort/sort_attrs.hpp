// Attributes of the sort family's ops (sort, argsort), decoded once from the callback's options.
#pragma once
#include <cstdint>

namespace nxv {

// `axis`, `direction: :asc | :desc` and, for argsort, `stable` (every sort here is stable, as
// Nx.BinaryBackend's is, so the flag changes nothing). argsort's index type is its output type.
struct SortAttrs {
  int64_t axis = 0;
  bool descending = false;
  bool stable = false;
};

}  // namespace nxv
