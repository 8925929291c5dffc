// The interface of an op family (engine/src/ops/<family>/). Every op, eager or in a compiled
// graph, takes the same path: its options decoded once into typed attributes (decode), a
// check that sees everything support depends on (check), and a lowering that appends kernel
// launches to a LaunchBuilder (lower); the launches run as an Executable on the device's stream.
//
// Adding a family: a folder with a .cpp defining `const Family& <name>_family()`, its GLSL
// templates beside it (*.comp; shared structs in *.h, included by C++ and GLSL alike), and its
// rows in nxv/op_table.inc. CMake and the registry pick both up from there.
#pragma once
#include <span>
#include <vector>

#include "exec/launch.hpp"
#include "nxv/ops.hpp"

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
};

inline Support not_native(std::string reason, ErrorKind kind = ErrorKind::Unsupported) {
  return Support{false, kind, std::move(reason)};
}

// The family functions, one per NXV_FAMILY row of the op table.
#define NXV_FAMILY(family) const Family& family##_family();
#include "nxv/op_table.inc"

const Family& family_of(OpId op);

}  // namespace nxv
