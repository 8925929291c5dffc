// The shape family's lowerings beyond views, one file each: transposing copies, padding and
// reversing gathers, joins (concatenate, stack, put_slice) and creation (iota, eye, constant).
#pragma once
#include <cstdint>

#include "ops/family.hpp"
#include "ops/shape/shape_attrs.hpp"

namespace nxv {

// A tensor bound to a builder slot.
struct BoundTensor {
  Tensor tensor;
  uint32_t slot;
};

// Copies `view` (any non-negative strides) into `out` (row-major, same shape and type),
// through shared-memory tiles when the view's fastest axis is not the output's last.
void append_materialize(Device& device, LaunchBuilder& builder, const Tensor& view, uint32_t view_slot,
                        const Tensor& out, uint32_t out_slot);

// `input` in type `type`: itself, or a row-major conversion appended to the builder (Nx's
// as_type semantics, the elementwise family's kernel).
BoundTensor converted(Device& device, LaunchBuilder& builder, const BoundTensor& input, DType type);

// Fills `out` (contiguous) with `value` converted to its type as Nx's as_type converts.
void append_constant(Device& device, LaunchBuilder& builder, const Tensor& out, uint32_t out_slot,
                     const AttrNumber& value);

void lower_pad(const LowerArgs& a, const ShapeAttrs& attrs);
void lower_reverse(const LowerArgs& a, const ShapeAttrs& attrs);
void lower_join(const LowerArgs& a, const ShapeAttrs& attrs);  // concatenate, stack
void lower_put_slice(const LowerArgs& a, const ShapeAttrs& attrs);
// slice and put_slice with dynamic_axes: starts read and clamped on the device.
void lower_dynamic_slice(const LowerArgs& a, const ShapeAttrs& attrs);
void lower_dynamic_put_slice(const LowerArgs& a, const ShapeAttrs& attrs);
void lower_creation(const LowerArgs& a, const ShapeAttrs& attrs);  // iota, eye, constant

// The variants of each template the lowerings above launch (kernel_variant.hpp).
void declare_transpose_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);
void declare_pad_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);
void declare_dynamic_slice_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);
void declare_index_fill_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info);

}  // namespace nxv
