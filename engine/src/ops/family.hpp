// The interface of an op family (engine/src/ops/<family>/). Every op, eager or in a compiled
// graph, takes the same path: its options decoded once into typed attributes (decode), a
// check that sees everything support depends on (check), and a lowering that appends kernel
// launches to a LaunchBuilder (lower); the launches run as an Executable on the device's stream.
//
// Adding a family: a folder with a .cpp defining `const Family& <name>_family()`, its GLSL
// templates beside it (*.comp; shared structs in *.h, included by C++ and GLSL alike), and its
// rows in nxv/op_table.inc. CMake and the registry pick both up from there. Each template is
// launched through one typed variant struct (kernels/kernel_variant.hpp), which the family
// lists in declare_variants so that a test compiles them all.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "exec/launch.hpp"
#include "nxv/graph.hpp"
#include "nxv/ops.hpp"
#include "ops/elementwise/fusion.hpp"

namespace nxv {

struct CheckArgs {
  Device& device;
  OpId op;
  const OutSpec& out;
  std::span<const TensorSpec> inputs;
  const Attrs& attrs;
};

// An input as a lowering sees it: the tensor (its view: shape, strides, offset) and its slot.
struct LowerInput {
  Tensor tensor;
  uint32_t slot;
};

struct LowerArgs {
  Device& device;
  OpId op;
  const OutSpec& out;
  const std::vector<LowerInput>& inputs;
  const Tensor& output;  // allocated by the caller, contiguous
  uint32_t output_slot;
  const Attrs& attrs;
  LaunchBuilder& builder;
};

class Family {
 public:
  virtual ~Family() = default;
  // What check's answer depends on besides op, device and types (SupportDepends bits).
  virtual uint32_t support_depends() const { return kDependsOnTypes; }
  // The op's typed attributes from its options; ops without options return {}.
  virtual Attrs decode(OpId, const AttrReader&) const { return {}; }
  // Native or not, and why not; never throws for a request it merely cannot serve.
  virtual Support check(const CheckArgs& args) const = 0;
  // When the result is one of the inputs or a view of one (no device work), returns it.
  virtual std::optional<Tensor> view_result(OpId, const OutSpec&, const std::vector<Tensor>&, const Attrs&) const {
    return std::nullopt;
  }
  // Appends the op's launches (after a successful check).
  virtual void lower(const LowerArgs& args) const = 0;

  // Roles in compiled graphs. The passes in engine/src/graph read these and name no family;
  // whatever a role rewrites must keep the bits of the ops run one by one.

  // Simplification: the node's result from cheaper nodes with the same bits, appended to `out`
  // (`inputs`: the node's inputs as values of `out`; `graph` holds the node and the producers
  // of its inputs; `device`: the device the graph compiles for). Returns the value holding the
  // result, or nullopt having appended nothing.
  virtual std::optional<uint32_t> append_simplified(const GraphNode&, const Graph& /*graph*/,
                                                    std::span<const uint32_t> /*inputs*/, Graph& /*out*/,
                                                    const Device& /*device*/) const {
    return std::nullopt;
  }
  // Pointwise: the node's work as elementwise steps (none for a view such as bitcast; a
  // constant is a chain constant). Appends them to `chain`, the node's inputs read as
  // `operand_of`, and returns the operand that holds the node's result; nullopt where a step
  // reads an input the node does not have.
  virtual bool pointwise(const GraphNode&, const Graph&) const { return false; }
  virtual std::optional<ChainOperand> append_pointwise_steps(const GraphNode&,
                                                             const std::vector<ChainOperand>& /*operand_of*/,
                                                             ElementwiseChain&) const {
    return std::nullopt;
  }
  // Store epilogue: the node's kernels apply an elementwise chain where they store its result
  // (chain input 0 the node's own value, inputs 1.. its tensors after its own_inputs).
  virtual bool takes_epilogue(const GraphNode&) const { return false; }
  // The most tensors such an epilogue reads besides the node's value.
  virtual size_t epilogue_tensors(const GraphNode&) const { return 0; }
  virtual size_t own_inputs(const GraphNode&) const { return 2; }
  // Whether `attrs` carry fused work (an epilogue, whose tensors follow the op's own; a
  // prologue, whose tensors replace its input): check_op then takes other inputs than the
  // op's arity says, and the family checks them.
  virtual bool has_fused_inputs(OpId, const Attrs&) const { return false; }
  // Load prologue: the node's kernels compute each element of its (first) input by an
  // elementwise chain over the chain's tensors, which take the input's place (up to three,
  // broadcast to `shape`), so that the chain's result is never stored.
  virtual bool takes_prologue(const GraphNode&) const { return false; }
  virtual Attrs with_prologue(const GraphNode& node, ElementwiseChain, uint32_t /*inputs*/, const Shape& /*shape*/) const {
    return node.attrs;
  }
  // Operand prologue: the node's kernels apply a chain over one tensor, of that tensor's type,
  // to each value of its own operand `operand` where they load it (a product of relu(z) reads
  // z), so that several nodes reading the chain's result each compute it again.
  virtual bool takes_operand_prologue(const GraphNode&, size_t /*operand*/) const { return false; }
  virtual Attrs with_operand_prologue(const GraphNode& node, size_t /*operand*/, ElementwiseChain) const {
    return node.attrs;
  }
  virtual std::optional<ElementwiseChain> epilogue(const GraphNode&) const { return std::nullopt; }
  // The node's attributes with `chain` as its epilogue.
  virtual Attrs with_epilogue(const GraphNode& node, ElementwiseChain) const { return node.attrs; }
  // Donation: whether each element of the node's result is stored by the invocation that read
  // the same element of input `i` (whose buffer may then hold the result).
  virtual bool stores_where_it_reads(const GraphNode&, size_t /*input*/, const Graph&) const { return false; }
  // Permutations: the axes of its one input that the node only permutes (a transpose).
  virtual std::optional<std::vector<int64_t>> permutation(const GraphNode&) const { return std::nullopt; }
  // The node computing its result with its axes permuted (result axis i = axis perm[i]) for no
  // more work and with the same bits: its replacement (op, inputs, attributes; out is set by
  // the caller), else nullopt.
  virtual std::optional<GraphNode> with_permuted_result(Device&, const GraphNode&, const Graph&,
                                                        std::span<const int64_t> /*perm*/) const {
    return std::nullopt;
  }
  // Kernels: every variant of each template the family launches (kernel_variant.hpp).
  virtual void declare_variants(std::vector<DeclaredVariant>& /*out*/, const DeviceInfo& /*info*/) const {}
};

inline Support not_native(std::string reason, ErrorKind kind = ErrorKind::Unsupported) {
  return Support{false, kind, std::move(reason)};
}

// The family functions, one per NXV_FAMILY row of the op table.
#define NXV_FAMILY(family) const Family& family##_family();
#include "nxv/op_table.inc"

const Family& family_of(OpId op);

// Every declared variant of every kernel template the engine launches: the families' and the
// engine layers' (copies, the loop kernel).
std::vector<DeclaredVariant> declared_kernel_variants(const DeviceInfo& info);

}  // namespace nxv
