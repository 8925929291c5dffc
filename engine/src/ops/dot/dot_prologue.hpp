// Dot operand prologues (dot_attrs.hpp): a chain over one tensor, of that tensor's type,
// applied to each value of an operand where the GPU dot kernels load it: gemm.comp's LOAD_A /
// LOAD_B and matvec.comp's LOAD_M / LOAD_V, four-wide loads component by component. Each value
// is the chain's result rounded to its type as the chain's own kernel stores it, so the product
// has the bits of the chain run alone and then the dot. The tiers that apply them are the ones
// GPUs take for real float and integer products (the SIMT tile, the matrix-vector kernel);
// check refuses a prologue wherever another tier would take the product.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <tuple>

#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_kernels.hpp"
#include "ops/elementwise/store_epilogue.hpp"
#include "ops/family.hpp"

namespace nxv {

// "" when the prologues of `a` run in the dot kernels of this check; else why not, with
// `invalid` set where the request is malformed.
std::string dot_prologue_error(const CheckArgs& c, const DotAttrs& a, bool& invalid);

// The types the kernel's fused code computes in besides an epilogue's own: the prologues'
// results, and f64 where a prologue computes in it (so that the epilogue's check sees the f64
// float controls the kernel then declares).
std::vector<DType> dot_prologue_types(const DotAttrs& a, const std::vector<DType>& operand_types, bool has_f64);

// What the prologues add to a kernel: nxv_prologue_<role> over the stored values of each
// operand that has one, and its loads through it.
struct DotPrologueCode {
  std::array<std::string, 2> roles;  // the load macros' operand letters ("A", "B"; "M", "V")
  std::array<bool, 2> on{};
  std::array<DType, 2> types{};
  std::string generated;
  Defines defines;  // the chains' library switches
  FeatureSet features;
  auto fields() const { return std::tie(roles, on, types, generated, defines, features); }
};

// The code of the prologues of `first` and `second` (GemmOperand::prologue) for a kernel that
// loads them through LOAD_<roles[i]>; nullopt where neither has one.
std::optional<DotPrologueCode> dot_prologue_code(const GemmOperand& first, const GemmOperand& second,
                                                 std::array<const char*, 2> roles, bool has_f64);

// `key` loading its operands through the prologues.
KernelKey with_dot_prologue(KernelKey key, const DotPrologueCode& code);

template <KernelVariant V>
using WithDotPrologue = WithGeneratedCode<V, DotPrologueCode, with_dot_prologue>;

// A dot kernel: `variant`, with its prologues and its epilogue where it has them.
template <KernelVariant V>
const Kernel* dot_kernel(KernelCache& kernels, const V& variant, const std::optional<DotPrologueCode>& pro,
                         const StoreEpilogue* epi) {
  if (!pro) return epilogue_kernel(kernels, variant, epi);
  return epilogue_kernel(kernels, WithDotPrologue<V>{variant, *pro}, epi);
}

}  // namespace nxv
