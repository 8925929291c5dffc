// Sorting long rows: an LSD radix sort of 8-bit digits (radix_histogram, radix_scan and
// radix_scatter.comp), four launches per digit, ping-ponging between two scratch buffers.
#pragma once
#include "ops/family.hpp"
#include "ops/sort/sort_attrs.hpp"

namespace nxv {

void lower_radix_sort(const LowerArgs& a, const SortAttrs& attrs);
void declare_radix_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
