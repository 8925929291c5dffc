// A dot's epilogue: an elementwise chain applied to each product where the dot kernels store
// it (dot_attrs.hpp). Chain input 0 is the product rounded to its type (as the dot alone
// stores it), inputs 1 and 2 the op's extra tensors broadcast to the output and read through
// their strides; each step keeps the scalar expression and rounding of its own kernel
// (ops/elementwise/fusion.hpp), so that the result has the bits of the dot followed by the
// chain's ops one by one. A chain chain_rounding would split is refused (check), never split.
// Every tier that runs on lavapipe applies it (SIMT tile, rows, cpu, matvec, split-K's sum);
// the cooperative-matrix tiers are not chosen for a dot with an epilogue.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "exec/launch.hpp"
#include "kernels/glsl_types.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_plan.hpp"
#include "ops/family.hpp"

namespace nxv {

class DeviceImpl;

struct DotEpilogue {
  DType product = DType::F32, out = DType::F32;
  std::vector<DType> extra;                         // types of chain inputs 1 (and 2)
  std::vector<BufferRef> refs;                      // where they start
  std::vector<std::array<int64_t, 3>> strides;      // {batch, m, n} element strides
  uint32_t m = 1, n = 1;
  std::string generated;  // nxv_epilogue and the chain's functions (nxv_generated.glsl)
  Defines defines;        // the chain's library switches and NXV_GENERATED
  FeatureSet features;
};

// "" when `a.epilogue` runs in the dot kernels of this check; else why not, with `invalid`
// set where the request is malformed (types, shapes, operand count).
std::string dot_epilogue_error(const CheckArgs& c, const DotAttrs& a, bool& invalid);

// The epilogue of a lowering: its extra tensors read in place where their broadcast views'
// axis groups (batch, left free, right free) collapse to one stride each, else copied first.
DotEpilogue make_dot_epilogue(const LowerArgs& a, const DotAttrs& at);

// A dot kernel: `variant` without an epilogue; with one, make_key()'s source with the
// epilogue's code, defines and output type (keyed by its source: the chain is in the key).
// A pointer: the kernel outlives the key's function (a reference would read as dangling).
const Kernel* dot_kernel(DeviceImpl& impl, const VariantKey& variant, const DotEpilogue* epi,
                         const std::function<KernelKey()>& make_key);

// Attaches the epilogue's parameter block to `l` (its address at `push_offset` of the push
// constants) and marks its tensors read. Nothing without an epilogue.
void attach_dot_epilogue(LaunchBuilder& builder, Launch& l, const DotEpilogue* epi, uint32_t push_offset);

}  // namespace nxv
