// concatenate, stack and put_slice: each input copied (converted first where its type is not
// the output's) into its region of the row-major output.
#include "memory/copy.hpp"
#include "ops/shape/shape_lowering.hpp"

namespace nxv {

void lower_join(const LowerArgs& a, const ShapeAttrs& attrs) {
  int64_t axis = *attrs.axis;
  int64_t at = 0;
  for (const auto& input : a.inputs) {
    BoundTensor in = converted(a.device, a.builder, {input.tensor, input.slot}, a.out.type);
    Tensor src = in.tensor;
    if (a.op == OpId::stack) {  // the new axis, of size 1
      src.shape.insert(src.shape.begin() + axis, 1);
      src.strides.insert(src.strides.begin() + axis, 0);
    }
    Tensor region = a.output;
    region.shape[axis] = src.shape[axis];
    region.offset += at * a.output.strides[axis];
    at += src.shape[axis];
    if (region.size() == 0) continue;
    append_copy_between(a.device, a.builder, src, in.slot, region, a.output_slot, Access::WriteDisjoint);
  }
}

void lower_put_slice(const LowerArgs& a, const ShapeAttrs& attrs) {
  BoundTensor in = converted(a.device, a.builder, {a.inputs[0].tensor, a.inputs[0].slot}, a.out.type);
  BoundTensor slice = converted(a.device, a.builder, {a.inputs[1].tensor, a.inputs[1].slot}, a.out.type);
  append_copy(a.device, a.builder, in.tensor, in.slot, a.output, a.output_slot);
  if (slice.tensor.size() == 0) return;
  std::vector<int64_t> starts(attrs.starts.size()), steps(attrs.starts.size(), 1);
  for (size_t d = 0; d < starts.size(); ++d)  // Nx clamps the starts into range
    starts[d] = std::clamp<int64_t>(attrs.starts[d], 0, a.output.shape[d] - slice.tensor.shape[d]);
  Tensor region = slice_view(a.output, starts, slice.tensor.shape, steps);
  append_copy_between(a.device, a.builder, slice.tensor, slice.slot, region, a.output_slot);
}

}  // namespace nxv
