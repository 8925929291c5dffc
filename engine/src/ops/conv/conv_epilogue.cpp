// Conv epilogues: offset epilogues (ops/elementwise/offset_epilogue.hpp) over the conv's output.
#include "ops/conv/conv_epilogue.hpp"

namespace nxv {

std::string conv_epilogue_error(const CheckArgs& c, const ConvAttrs& a, bool& invalid) {
  return store_epilogue_error(c, *a.epilogue, a.product, "conv", invalid);
}

StoreEpilogue make_conv_epilogue(const LowerArgs& a, const ConvAttrs& at) {
  StoreEpilogue e = make_offset_epilogue(a, *at.epilogue, at.product, 2);
  // The split-K sum (dot_split_sum.comp) reads these parameters, not a dot's.
  e.defines.emplace_back("CONV_EPILOGUE", "1");
  return e;
}

}  // namespace nxv
