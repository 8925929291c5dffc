// The exception boundary: every NIF body runs inside `guard`, so no C++ exception crosses
// into the BEAM. nxv::Error -> {:error, kind, message} (kind from nxv::error_kind_name),
// std::bad_alloc -> {:error, :out_of_memory, message}, anything else -> {:error, :driver, message}.
#pragma once
#include <erl_nif.h>

#include <exception>
#include <string_view>
#include <utility>

namespace nxv_nif {

ERL_NIF_TERM make_error(ErlNifEnv* env, const char* kind, std::string_view message);
// Turns the exception being handled into an error tuple. Call only inside a catch block.
ERL_NIF_TERM current_exception_to_term(ErlNifEnv* env) noexcept;

template <typename F>
ERL_NIF_TERM guard(ErlNifEnv* env, F&& body) noexcept {
  try {
    return std::forward<F>(body)();
  } catch (...) {
    return current_exception_to_term(env);
  }
}

}  // namespace nxv_nif
