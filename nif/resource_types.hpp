// NIF resource types whose objects are C++ values: opened (or taken over on upgrade) with a
// destructor that runs the value's own, never throwing into the VM.
#pragma once
#include <erl_nif.h>

namespace nxv_nif {

template <typename T>
ErlNifResourceType* open_resource_type(ErlNifEnv* env, const char* name) {
  ErlNifResourceFlags tried;
  auto destroy = [](ErlNifEnv*, void* object) {
    // Runs when the BEAM garbage-collects the last reference.
    try {
      static_cast<T*>(object)->~T();
    } catch (...) {
    }
  };
  return enif_open_resource_type(env, nullptr, name, destroy,
                                 static_cast<ErlNifResourceFlags>(ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER), &tried);
}

}  // namespace nxv_nif
