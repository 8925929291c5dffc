// Cumulative ops of the reduce family (scan.comp): their check and lowering.
#pragma once
#include "ops/family.hpp"

namespace nxv {

bool is_cumulative(OpId op);
Attrs decode_cumulative(const AttrReader& r);
Support check_cumulative(const CheckArgs& c);
void lower_cumulative(const LowerArgs& a);
void declare_scan_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
