#include "ops/registry.hpp"

#include <map>
#include <mutex>

#include "common/errors.hpp"
#include "memory/transfer.hpp"

namespace nxv {
namespace {

std::map<std::string, OpImpl, std::less<>>& table() {
  static std::map<std::string, OpImpl, std::less<>> t;
  return t;
}

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] { register_elementwise_ops(); });
}

}  // namespace

void register_op(const std::string& name, OpImpl impl) { table()[name] = std::move(impl); }

const OpImpl* find_op(std::string_view name) {
  ensure_registered();
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> registered_op_names() {
  ensure_registered();
  std::vector<std::string> names;
  for (const auto& [name, _] : table()) names.push_back(name);
  return names;
}

std::vector<std::string> native_op_names() { return registered_op_names(); }

bool supports_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<DType>& input_types) {
  const OpImpl* impl = find_op(op);
  if (!impl) return false;
  try {
    impl->check(device, op, out, input_types);
    return true;
  } catch (const Error&) {
    return false;
  }
}

Tensor run_op(Device& device, std::string_view op, const OutSpec& out, const std::vector<Tensor>& inputs,
              const Options& options) {
  const OpImpl* impl = find_op(op);
  if (!impl) throw Error(ErrorKind::Unsupported, "op '" + std::string(op) + "' has no native implementation yet");
  std::vector<DType> types;
  for (const auto& t : inputs) {
    check_same_device(device, t);
    types.push_back(t.type);
  }
  impl->check(device, op, out, types);
  return translate_vk("running op", [&] { return impl->run(OpCall{device, op, out, inputs, options}); });
}

}  // namespace nxv
