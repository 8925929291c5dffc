// The op table (nxv/op_table.inc) as data, and the one path every op takes: decode, check,
// lower into launches, run them as an executable (an eager op is a one-node graph).
#include <algorithm>

#include "common/errors.hpp"
#include "device/device_impl.hpp"
#include "exec/phase_times.hpp"
#include "graph/graph.hpp"
#include "memory/copy.hpp"
#include "memory/transfer.hpp"
#include "ops/family.hpp"

namespace nxv {
namespace {

constexpr OpInfo kOpTable[] = {
#define NXV_OP(name, family, arity) {OpId::name, #name, FamilyId::family, #family, arity},
#include "nxv/op_table.inc"
};

using FamilyFn = const Family& (*)();
constexpr FamilyFn kFamilies[] = {
#define NXV_FAMILY(family) &family##_family,
#include "nxv/op_table.inc"
};

}  // namespace

std::span<const OpInfo> op_table() { return kOpTable; }

const OpInfo& op_info(OpId op) {
  size_t i = size_t(op);
  if (i >= std::size(kOpTable)) throw Error(ErrorKind::InvalidArgument, "unknown op id " + std::to_string(i));
  return kOpTable[i];
}

std::optional<OpId> find_op(std::string_view name) {
  for (const auto& row : kOpTable)
    if (row.name == name) return row.id;
  return std::nullopt;
}

const Family& family_of(OpId op) { return kFamilies[size_t(op_info(op).family)](); }

std::vector<DeclaredVariant> declared_kernel_variants(const DeviceInfo& info) {
  std::vector<DeclaredVariant> all;
  for (FamilyFn family : kFamilies) family().declare_variants(all, info);
  declare_copy_variants(all, info);
  return all;
}

TensorSpec spec_of(const Tensor& t) { return {t.type, t.shape, t.strides, t.offset}; }

TensorSpec contiguous_spec(DType type, const Shape& shape) { return {type, shape, row_major_strides(shape), 0}; }

uint32_t support_depends(OpId op) { return family_of(op).support_depends(); }

Attrs decode_attrs(OpId op, const AttrReader& options) { return family_of(op).decode(op, options); }

Support check_op(Device& device, OpId op, const OutSpec& out, std::span<const TensorSpec> inputs, const Attrs& attrs) {
  const OpInfo& info = op_info(op);
  const Family& family = family_of(op);
  if (info.arity >= 0 && size_t(info.arity) != inputs.size() && !family.has_fused_inputs(op, attrs))
    return {false, ErrorKind::InvalidArgument,
            std::string(info.name) + " takes " + std::to_string(info.arity) + " tensors, got " +
                std::to_string(inputs.size())};
  return family.check(CheckArgs{device, op, out, inputs, attrs});
}

namespace {

std::variant<Tensor, std::shared_ptr<PreparedOp>> run_or_prepare(Device& device, OpId op, const OutSpec& out,
                                                                 const std::vector<Tensor>& inputs, const Attrs& attrs,
                                                                 bool prepare) {
  PhaseTimer timer(Phase::RunOp);
  for (const auto& t : inputs) check_same_device(device, t);
  // The node is checked (check_op) where it is lowered, before anything is recorded.
  return translate_vk("running op", [&] { return run_or_prepare_one_node(device, op, out, inputs, attrs, prepare); });
}

}  // namespace

Tensor run_op(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return std::get<Tensor>(run_or_prepare(device, op, out, inputs, attrs, false));
}

std::optional<Tensor> run_op_if_compiled(Device& device, OpId op, const OutSpec& out, const std::vector<Tensor>& inputs,
                                         const Attrs& attrs, std::shared_ptr<PreparedOp>* prepared) {
  try {
    CompileFreeScope no_compiles;
    auto ran = run_or_prepare(device, op, out, inputs, attrs, prepared != nullptr);
    if (auto* t = std::get_if<Tensor>(&ran)) return std::move(*t);
    *prepared = std::move(std::get<std::shared_ptr<PreparedOp>>(ran));
    return std::nullopt;
  } catch (const KernelNotReady&) {
    return std::nullopt;
  }
}

Tensor run_prepared(Device& device, const PreparedOp& op) {
  translate_vk("running op", [&] { op.exec.run(device.impl().stream, device.impl().kernels.layout(), op.buffers); });
  return op.result;
}

Tensor run_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<Tensor>& inputs,
              const Attrs& attrs) {
  auto id = find_op(op);
  if (!id) throw Error(ErrorKind::Unsupported, "op '" + std::string(op) + "' has no native implementation yet");
  return run_op(device, *id, out, inputs, attrs);
}

bool supports_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<DType>& input_types) {
  auto id = find_op(op);
  if (!id) return false;
  std::vector<TensorSpec> specs;
  for (DType t : input_types) specs.push_back(contiguous_spec(t, out.shape));
  return bool(check_op(device, *id, out, specs));
}

std::vector<std::string> native_op_names() {
  std::vector<std::string> names;
  for (const auto& row : kOpTable) names.emplace_back(row.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace nxv
