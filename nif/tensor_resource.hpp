// The tensor resource: a BEAM-owned handle on an engine tensor (shared ownership of its
// buffer). `deallocate` drops the handle's share at once; any later use is an error
// ("tensor was deallocated"). Work already recorded keeps its own share of the buffer.
#pragma once
#include <erl_nif.h>

#include <cstdint>
#include <mutex>
#include <optional>

#include "nxv/tensor.hpp"

namespace nxv_nif {

struct TensorResource {
  std::mutex mutex;
  std::optional<nxv::Tensor> tensor;
  int64_t device_index = 0;
};

bool open_tensor_resource_type(ErlNifEnv* env);

// Wraps `tensor` in a new resource term.
ERL_NIF_TERM make_tensor_term(ErlNifEnv* env, nxv::Tensor tensor, int64_t device_index);

// The resource behind `term`; throws InvalidArgument when it is not a tensor reference.
TensorResource& get_resource(ErlNifEnv* env, ERL_NIF_TERM term);

// A tensor with the index of the device that holds it.
struct HeldTensor {
  nxv::Tensor tensor;
  int64_t device_index = 0;
};

// A copy of the tensor (sharing its buffer); throws nxv::Error(Deallocated) after deallocate.
HeldTensor get_tensor(ErlNifEnv* env, ERL_NIF_TERM term);

// Drops the resource's tensor. Returns false when it was already deallocated.
bool deallocate(TensorResource& resource);

}  // namespace nxv_nif
