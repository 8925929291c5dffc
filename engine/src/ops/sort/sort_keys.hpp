// The C++ side of sort_keys.glsl: how a kernel of the sort family reads an Nx type as raw bits
// and maps it to an order-preserving key, and what that needs of the device.
#pragma once
#include <optional>

#include "kernels/glsl_types.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

// Whether Nx sorts the type (every real type; complex numbers have no order).
bool sortable(DType t);

// RAW, RAW_ALIGN, KEY, KEY_BITS, KEY_KIND, KEY_NAN_ABOVE, DESC for values of `t`.
void add_sort_key_defines(Defines& d, DType t, bool descending);

// What a sort kernel over values of `t` (and indices written as `index_type`) needs: 8/16-bit
// storage for the narrow types, int64 for 64-bit keys. Never f64: values travel as bits.
FeatureSet sort_features(DType t, std::optional<DType> index_type = std::nullopt);

// OUT_STORE, OUT_ALIGN, STORE_IDX(v) for indices (a uint v) written as `index_type`.
void add_index_store_defines(Defines& d, DType index_type);

}  // namespace nxv
