// Sorting rows that fit in shared memory (sort_rows.comp): any layout, one launch.
#pragma once
#include "ops/family.hpp"
#include "ops/sort/sort_attrs.hpp"

namespace nxv {

// Longest row sorted in shared memory; longer rows go to the radix sort.
inline constexpr int64_t kRowSortMax = 2048;

// Writes the first `n_out` of each sorted row (all when 0).
void lower_row_sort(const LowerArgs& a, const SortAttrs& attrs, int64_t n_out = 0);
void declare_sort_rows_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
