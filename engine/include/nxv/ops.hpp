// The op entry point. Same meaning as the Nx.Backend callbacks: an output spec chosen by Nx
// (shape and type, promotion already done), input tensors in their own types and shapes
// (un-broadcast), and the callback's options decoded once into the op family's typed
// attributes. Serves the NIF and the C++ tests alike.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxv/attrs.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

enum class FamilyId : uint8_t {
#define NXV_FAMILY(family) family,
#include "nxv/op_table.inc"
};

enum class OpId : uint16_t {
#define NXV_OP(name, family, arity) name,
#include "nxv/op_table.inc"
};

// One row of the op table (nxv/op_table.inc).
struct OpInfo {
  OpId id;
  std::string_view name;
  FamilyId family;
  std::string_view family_name;
  int arity;  // tensor inputs; -1 for a list
};

std::span<const OpInfo> op_table();
const OpInfo& op_info(OpId op);
std::optional<OpId> find_op(std::string_view name);

struct OutSpec {
  DType type = DType::F32;
  Shape shape;
};

// What a family's check sees of an input: everything but the data.
struct TensorSpec {
  DType type = DType::F32;
  Shape shape;
  std::vector<int64_t> strides;  // in elements; 0 on broadcast axes
  int64_t offset = 0;
};
TensorSpec spec_of(const Tensor& t);
TensorSpec contiguous_spec(DType type, const Shape& shape);

// Which parts of a call a family's support answer depends on (besides op, device and types,
// which it always may): callers cache the answer by exactly these (Nx.Vulkan.Native).
enum SupportDepends : uint32_t {
  kDependsOnTypes = 0,
  kDependsOnRanks = 1u << 0,
  kDependsOnShapes = 1u << 1,
  kDependsOnLayouts = 1u << 2,  // strides and offsets
  kDependsOnAttrs = 1u << 3,
};
uint32_t support_depends(OpId op);

// Whether a call runs natively, and if not why (kind Unsupported: the device or engine lacks
// it, the caller may fall back; InvalidArgument: the request itself is wrong).
struct Support {
  bool native = true;
  ErrorKind kind = ErrorKind::Unsupported;
  std::string reason;
  explicit operator bool() const { return native; }
};

// Decodes an op's options (an Elixir keyword list in the NIF, JSON in the tests) into the
// family's typed attributes. Throws InvalidArgument naming a missing or mistyped option.
Attrs decode_attrs(OpId op, const AttrReader& options);

Support check_op(Device& device, OpId op, const OutSpec& out, std::span<const TensorSpec> inputs,
                 const Attrs& attrs = {});

// Records the op on the device's stream and returns at once; the result is ready when read.
// Throws nxv::Error: InvalidArgument (shapes/types/options), Unsupported (op, type or feature
// missing: the caller may fall back), OutOfMemory, Deallocated, Driver.
Tensor run_op(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs,
              const Attrs& attrs = {});

// An op lowered and ready to run whose run blocks (its host step waits for the GPU).
struct PreparedOp;

// The same, but returns nullopt at once (nothing recorded) where a kernel it needs is not
// compiled yet, or where running it would block: for callers that must not block, which then
// call run_op elsewhere, or run_prepared with the op lowered here where `prepared` is given
// (set where the op was lowered and only its run blocks).
std::optional<Tensor> run_op_if_compiled(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs,
                                         const Attrs& attrs = {}, std::shared_ptr<PreparedOp>* prepared = nullptr);
// Runs an op that run_op_if_compiled prepared (blocking), and returns its result.
Tensor run_prepared(Device& device, const PreparedOp& op);

// Conveniences by name (tests, tools): an unknown name is Unsupported.
Tensor run_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<Tensor>& inputs,
              const Attrs& attrs = {});
// Inputs taken as contiguous tensors of the output's shape.
bool supports_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<DType>& input_types);

std::vector<std::string> native_op_names();

}  // namespace nxv
