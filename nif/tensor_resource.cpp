#include "tensor_resource.hpp"

#include <new>
#include <utility>

#include "nxv/error.hpp"
#include "resource_types.hpp"

namespace nxv_nif {

namespace {

ErlNifResourceType* tensor_type = nullptr;

}  // namespace

bool open_tensor_resource_type(ErlNifEnv* env) {
  tensor_type = open_resource_type<TensorResource>(env, "nx_vulkan_tensor");
  return tensor_type != nullptr;
}

ERL_NIF_TERM make_tensor_term(ErlNifEnv* env, nxv::Tensor tensor, int64_t device_index) {
  void* memory = enif_alloc_resource(tensor_type, sizeof(TensorResource));
  if (memory == nullptr) throw std::bad_alloc();
  auto* resource = new (memory) TensorResource();
  resource->tensor.emplace(std::move(tensor));
  resource->device_index = device_index;
  ERL_NIF_TERM term = enif_make_resource(env, resource);
  enif_release_resource(resource);
  return term;
}

TensorResource& get_resource(ErlNifEnv* env, ERL_NIF_TERM term) {
  void* object = nullptr;
  if (!enif_get_resource(env, term, tensor_type, &object))
    throw nxv::Error(nxv::ErrorKind::InvalidArgument, "expected a Vulkan tensor reference");
  return *static_cast<TensorResource*>(object);
}

HeldTensor get_tensor(ErlNifEnv* env, ERL_NIF_TERM term) {
  TensorResource& resource = get_resource(env, term);
  std::lock_guard<std::mutex> lock(resource.mutex);
  if (!resource.tensor) throw nxv::Error(nxv::ErrorKind::Deallocated, "tensor was deallocated");
  return {*resource.tensor, resource.device_index};
}

bool deallocate(TensorResource& resource) {
  std::optional<nxv::Tensor> dropped;
  {
    std::lock_guard<std::mutex> lock(resource.mutex);
    if (!resource.tensor) return false;
    dropped.swap(resource.tensor);
  }
  // The buffer share is released here, outside the lock.
  return true;
}

}  // namespace nxv_nif
