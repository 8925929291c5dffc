// Tensors: upload, download, deallocate, copy, and the op entry point.
#include <algorithm>
#include <string>
#include <vector>

#include "devices.hpp"
#include "guard.hpp"
#include "nifs.hpp"
#include "nxv/error.hpp"
#include "nxv/ops.hpp"
#include "tensor_resource.hpp"
#include "terms.hpp"

namespace nxv_nif {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw nxv::Error(nxv::ErrorKind::InvalidArgument, message);
}

std::vector<HeldTensor> get_tensors(ErlNifEnv* env, ERL_NIF_TERM list) {
  std::vector<HeldTensor> tensors;
  unsigned length = 0;
  if (!enif_get_list_length(env, list, &length)) invalid("expected a list of tensor references");
  tensors.reserve(length);
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) tensors.push_back(get_tensor(env, head));
  return tensors;
}

}  // namespace

// from_binary(device_index, type, shape, binary) -> {:ok, ref}
ERL_NIF_TERM from_binary_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    nxv::DType type = get_dtype(env, argv[1]);
    nxv::Shape shape = get_shape(env, argv[2]);
    ErlNifBinary bin;
    if (!enif_inspect_binary(env, argv[3], &bin)) invalid("expected a binary of tensor data");
    size_t expected = static_cast<size_t>(nxv::shape_size(shape)) * nxv::dtype_size(type);
    if (bin.size != expected)
      invalid("binary has " + std::to_string(bin.size) + " bytes, the tensor needs " +
              std::to_string(expected));
    auto device = device_at(index);
    nxv::Tensor tensor = nxv::from_host(*device, type, shape, bin.data, bin.size);
    return make_ok(env, make_tensor_term(env, std::move(tensor), index));
  });
}

// to_binary(ref, limit) -> {:ok, binary}: the first min(limit, size) elements, row-major,
// byte for byte as the device holds them.
ERL_NIF_TERM to_binary_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    auto [tensor, index] = get_tensor(env, argv[0]);
    auto device = device_at(index);
    int64_t limit = get_int64(env, argv[1], "limit");
    int64_t size = tensor.size();
    int64_t count = limit < 0 ? size : std::min(limit, size);
    if (count == 0) return make_ok(env, make_binary(env, {}));
    if (count < size && tensor.is_contiguous()) {
      nxv::Tensor flat = nxv::reshape_view(tensor, {size});
      tensor = nxv::slice_view(flat, {0}, {count}, {1});
    }
    size_t bytes = static_cast<size_t>(tensor.size()) * nxv::dtype_size(tensor.type);
    ErlNifBinary bin;
    if (!enif_alloc_binary(bytes, &bin)) throw std::bad_alloc();
    try {
      if (bytes > 0) nxv::to_host(*device, tensor, bin.data, bytes);
    } catch (...) {
      enif_release_binary(&bin);
      throw;
    }
    size_t keep = static_cast<size_t>(count) * nxv::dtype_size(tensor.type);
    if (keep < bytes && !enif_realloc_binary(&bin, keep)) {
      enif_release_binary(&bin);
      throw std::bad_alloc();
    }
    return make_ok(env, enif_make_binary(env, &bin));
  });
}

// deallocate(ref) -> :ok | :already_deallocated
ERL_NIF_TERM deallocate_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    return deallocate(get_resource(env, argv[0])) ? atoms.ok : atoms.already_deallocated;
  });
}

// deallocated?(ref) -> boolean
ERL_NIF_TERM deallocated_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    TensorResource& resource = get_resource(env, argv[0]);
    std::lock_guard<std::mutex> lock(resource.mutex);
    return resource.tensor ? atoms.false_ : atoms.true_;
  });
}

// copy(ref, device_index) -> {:ok, ref}: a new buffer with the same contents (any device).
ERL_NIF_TERM copy_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    auto [tensor, from] = get_tensor(env, argv[0]);
    int64_t index = get_int64(env, argv[1], "device");
    std::vector<std::byte> bytes = nxv::to_host(*device_at(from), tensor);
    auto device = device_at(index);
    nxv::Tensor copy = nxv::from_host(*device, tensor.type, tensor.shape, bytes.data(), bytes.size());
    return make_ok(env, make_tensor_term(env, std::move(copy), index));
  });
}

// op(device_index, name, out_type, out_shape, [ref], options) -> {:ok, ref}
ERL_NIF_TERM op_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    std::string name = get_string(env, argv[1], "op name");
    nxv::OutSpec out{get_dtype(env, argv[2]), get_shape(env, argv[3])};
    std::vector<HeldTensor> held = get_tensors(env, argv[4]);
    nxv::Options options = options_to_json(env, argv[5]);
    auto device = device_at(index);
    std::vector<nxv::Tensor> inputs;
    inputs.reserve(held.size());
    for (auto& input : held) {
      if (input.device_index != index)
        invalid("an input of " + name + " lives on device " + std::to_string(input.device_index) +
                ", not on device " + std::to_string(index));
      inputs.push_back(std::move(input.tensor));
    }
    nxv::Tensor result = nxv::run_op(*device, name, out, inputs, options);
    return make_ok(env, make_tensor_term(env, std::move(result), index));
  });
}

// native_ops() -> {:ok, [binary]}
ERL_NIF_TERM native_ops_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] {
    std::vector<std::string> names = nxv::native_op_names();
    std::vector<ERL_NIF_TERM> terms;
    terms.reserve(names.size());
    for (const auto& name : names) terms.push_back(make_binary(env, name));
    return make_ok(env, enif_make_list_from_array(env, terms.data(),
                                                  static_cast<unsigned>(terms.size())));
  });
}

// supports_op(device_index, name, out_type, out_shape, [input_type]) -> {:ok, boolean}
ERL_NIF_TERM supports_op_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    std::string name = get_string(env, argv[1], "op name");
    nxv::OutSpec out{get_dtype(env, argv[2]), get_shape(env, argv[3])};
    std::vector<nxv::DType> types;
    ERL_NIF_TERM head, tail = argv[4];
    while (enif_get_list_cell(env, tail, &head, &tail)) types.push_back(get_dtype(env, head));
    auto device = device_at(index);
    bool ok = nxv::supports_op(*device, name, out, types);
    return make_ok(env, ok ? atoms.true_ : atoms.false_);
  });
}

}  // namespace nxv_nif
