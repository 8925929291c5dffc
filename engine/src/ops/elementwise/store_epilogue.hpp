// A store epilogue: an elementwise chain that a producing kernel (dot, conv) applies to each
// value where it stores it. Chain input 0 is the value rounded to the producer's type (as the
// producer alone stores it), inputs 1 and 2 the op's extra tensors broadcast to the output and
// read at the output element's position; each step keeps the scalar expression and rounding of
// its own kernel (ops/elementwise/fusion.hpp), so that the result has the bits of the producer
// followed by the chain's ops one by one. A chain chain_rounding would split is refused
// (store_epilogue_error), never split. The producer lays out the parameter block and says how
// an output index reaches the extra tensors (ops/dot/dot_epilogue.cpp, ops/conv/conv_epilogue.cpp).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "exec/launch.hpp"
#include "kernels/glsl_types.hpp"
#include "ops/elementwise/fusion.hpp"
#include "ops/elementwise/store_epilogue.h"
#include "ops/family.hpp"

namespace nxv {

class DeviceImpl;

// What an epilogue adds to its producer's kernel: part of the kernel's variant.
struct StoreEpilogueCode {
  DType out = DType::F32;
  Defines defines;
  std::string generated;
  FeatureSet features;
  auto fields() const { return std::tie(out, defines, generated, features); }
};

struct StoreEpilogue {
  DType product = DType::F32, out = DType::F32;
  std::vector<DType> extra;          // types of chain inputs 1.. (up to NXV_EPILOGUE_TENSORS)
  std::vector<BufferRef> refs;       // where they start
  std::vector<std::byte> params;     // the producer's parameter block (its `zero` left 0)
  std::vector<AddressPatch> patches; // the extra tensors' addresses in it
  std::string generated;  // nxv_epilogue and the chain's functions (nxv_generated.glsl)
  Defines defines;        // the chain's library switches, NXV_GENERATED and the producer's
  FeatureSet features;
  StoreEpilogueCode code() const;
};

// A family whose attributes A hold `epilogue` and `product` (dot, conv, reduce): its graph
// roles. Its nodes' own operands are the first own_inputs() inputs; an epilogue's tensors follow.
template <typename A>
class StoreEpilogueFamily : public Family {
 public:
  bool takes_epilogue(const GraphNode& n) const override { return !n.attrs.empty(); }
  size_t epilogue_tensors(const GraphNode&) const override { return NXV_EPILOGUE_TENSORS; }

  std::optional<ElementwiseChain> epilogue(const GraphNode& n) const override { return n.attrs.as<A>().epilogue; }

  bool has_fused_inputs(OpId, const Attrs& attrs) const override {
    const A* a = attrs.empty() ? nullptr : attrs.try_as<A>();
    return a && a->epilogue;
  }

  // An epilogue's tensors are read where each result is stored.
  bool stores_where_it_reads(const GraphNode& n, size_t input, const Graph& graph) const override {
    const OutSpec& in = graph.value(n.inputs.at(input));
    return input >= own_inputs(n) && in.shape == n.out.shape && dtype_size(in.type) == dtype_size(n.out.type);
  }

  Attrs with_epilogue(const GraphNode& n, ElementwiseChain chain) const override {
    A with = n.attrs.as<A>();
    if (!with.epilogue) with.product = n.out.type;  // the product's type, kept where it has one
    with.epilogue = std::move(chain);
    return Attrs::of(std::move(with));
  }
};

// "" when `chain` (inputs of types `in`, result `out`) runs inside another op's kernel whose
// code also handles `kernel_types`, with the bits of its steps run one by one (its typing,
// f64, rounding and per-workgroup-table rules); else why not, prefixed by `what`, with
// `invalid` set where the chain itself is malformed. Epilogues and prologues share it.
std::string fused_chain_error(const CheckArgs& c, const ElementwiseChain& chain, DType out, const std::vector<DType>& in,
                              const std::vector<DType>& kernel_types, const std::string& what, bool& invalid);

// "" when `chain` (over the product of type `product` and c.inputs[operands..]) runs where
// `op`'s kernels store, c.inputs[0..operands) being the producer's own operands; else why not,
// with `invalid` set where the request is malformed (types, shapes, operand count).
// `more_types`: other types the producer's kernel computes in (a reduction's prologue chain).
std::string store_epilogue_error(const CheckArgs& c, const ElementwiseChain& chain, DType product,
                                 const std::string& op, bool& invalid, size_t operands = 2,
                                 const std::vector<DType>& more_types = {});

// How the generated nxv_epilogue(uint i, ACC acc) reaches its data: `name` prefixes the extra
// tensors' buffer types, `params_type p = params_expr` is read first, `index` (code over i and
// p) computes what `at[j]` (extra tensor j's element index) uses. Where `coords` names the
// uints `index` computes (such as bz, row, col), the code also has nxv_epilogue_at(uint bz,
// uint row, uint col, ACC acc), for kernels that know an element's coordinates and would
// otherwise divide to find them again (nxv_epilogue then calls it).
struct EpilogueCode {
  std::string name, comment, params_type, params_expr, index;
  std::vector<std::string> coords, at;
};

// Fills e.generated, e.defines and e.features for `chain` (e.product, e.extra, e.out set).
void generate_store_epilogue(StoreEpilogue& e, const ElementwiseChain& chain, bool has_f64, const EpilogueCode& code);

// `key` (a producer's kernel) storing through the epilogue `code`; code the key already
// generates (a reduction's prologue) stays, as the first of nxv_generated.glsl's two parts.
KernelKey with_store_epilogue(KernelKey key, const StoreEpilogueCode& code);

// A producer's variant storing through an epilogue.
template <KernelVariant V>
using WithStoreEpilogue = WithGeneratedCode<V, StoreEpilogueCode, with_store_epilogue>;

// A producer's kernel: `variant`, with the epilogue where there is one.
// A pointer: callers keep it past temporaries (a reference would read as dangling).
template <KernelVariant V>
const Kernel* epilogue_kernel(KernelCache& kernels, const V& variant, const StoreEpilogue* epi) {
  if (!epi) return &kernels.get(variant);
  return &kernels.get(WithStoreEpilogue<V>{variant, epi->code()});
}

// Attaches a parameter block of bytes `params` to `l` (its address at `push_offset` of the push
// constants; `patches` place addresses inside it).
void attach_params(LaunchBuilder& builder, Launch& l, std::vector<std::byte> params, std::vector<AddressPatch> patches,
                   uint32_t push_offset);

// Attaches the epilogue's parameter block to `l` (its address at `push_offset` of the push
// constants) and marks its tensors read. Nothing without an epilogue.
void attach_epilogue(LaunchBuilder& builder, Launch& l, const StoreEpilogue* epi, uint32_t push_offset);

// Marks the epilogue's tensors read by `l` (where the block travels inside another one).
void use_epilogue_tensors(LaunchBuilder& builder, Launch& l, const StoreEpilogue* epi);

}  // namespace nxv
