#include "ops/sort/sort_keys.hpp"

#include <string>

namespace nxv {
namespace {

// The unsigned integer type of the same width: how the bits are stored and moved.
DType raw_type(DType t) {
  switch (dtype_size(t)) {
    case 1: return DType::U8;
    case 2: return DType::U16;
    case 4: return DType::U32;
    default: return DType::U64;
  }
}

// The largest magnitude (sign bit clear) that is not NaN: +Inf, or for f8_e4m3fn (no
// infinities) the largest finite value.
std::string nan_above(DType t) {
  switch (t) {
    case DType::F8: return "0x7Cu";
    case DType::F8E4M3FN: return "0x7Eu";
    case DType::F16: return "0x7C00u";
    case DType::BF16: return "0x7F80u";
    case DType::F32: return "0x7F800000u";
    default: return "(uint64_t(0x7FF00000u) << 32)";
  }
}

}  // namespace

bool sortable(DType t) { return !is_complex(t); }

void add_sort_key_defines(Defines& d, DType t, bool descending) {
  size_t bytes = dtype_size(t);
  d.emplace_back("RAW", glsl_storage_type(raw_type(t)));
  d.emplace_back("RAW_ALIGN", std::to_string(bytes));
  d.emplace_back("KEY", bytes == 8 ? "uint64_t" : "uint");
  d.emplace_back("KEY_BITS", std::to_string(bytes * 8));
  d.emplace_back("KEY_KIND", is_float(t) ? "2" : is_signed(t) ? "1" : "0");
  if (is_float(t)) d.emplace_back("KEY_NAN_ABOVE", nan_above(t));
  d.emplace_back("DESC", descending ? "1" : "0");
}

FeatureSet sort_features(DType t, std::optional<DType> index_type) {
  FeatureSet f;
  f.add_type(raw_type(t));
  if (index_type) f.add_type(*index_type);
  return f;
}

void add_index_store_defines(Defines& d, DType index_type) {
  d.emplace_back("OUT_STORE", glsl_storage_type(index_type));
  d.emplace_back("OUT_ALIGN", std::to_string(dtype_size(index_type)));
  d.emplace_back("STORE_IDX(v)", glsl_store(index_type));
}

}  // namespace nxv
