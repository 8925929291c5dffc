// The strided bit copy as launches: for lowerings that need a view laid out row-major first
// (a reduction over axes that are not adjacent, say), inside their own executable.
#pragma once
#include <cstdint>

#include "exec/launch.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

// Appends the launches copying `view` (any strides, bound to `in_slot`) into `out`
// (row-major, same type and shape, bound to `out_slot`).
// `out_access`: Access::WriteDisjoint where `out` is a region other copies of the same
// executable write beside (no barrier between them).
void append_copy(Device& device, LaunchBuilder& builder, const Tensor& view, uint32_t in_slot, const Tensor& out,
                 uint32_t out_slot, Access out_access = Access::Write);

// Appends the launches copying `src` into `dst`: two views of the same shape and element size
// (any non-negative strides; `dst` may be a region of a larger tensor, as concatenate writes).
void append_copy_between(Device& device, LaunchBuilder& builder, const Tensor& src, uint32_t src_slot,
                         const Tensor& dst, uint32_t dst_slot, Access dst_access = Access::Write);

// Every variant of the copy kernel (kernel_variant.hpp).
void declare_copy_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
