// Cumulative ops of the reduce family (scan.comp): their check and lowering.
#pragma once
#include "ops/family.hpp"

namespace nxv {

bool is_cumulative(OpId op);
Attrs decode_cumulative(const AttrReader& r);
Support check_cumulative(const CheckArgs& c);
void lower_cumulative(const LowerArgs& a);

}  // namespace nxv
