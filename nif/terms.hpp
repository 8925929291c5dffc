// Term decoding and encoding: Nx types, shapes, atoms and results (options: term_attrs.hpp).
#pragma once
#include <erl_nif.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nxv/dtype.hpp"
#include "nxv/tensor.hpp"

namespace nxv_nif {

// Atoms made once at load time.
struct Atoms {
  ERL_NIF_TERM ok, error, nil, true_, false_;
  ERL_NIF_TERM already_deallocated;
  ERL_NIF_TERM invalid_argument, unsupported, out_of_memory, deallocated, driver;
};
extern Atoms atoms;
void make_atoms(ErlNifEnv* env);

ERL_NIF_TERM make_atom(ErlNifEnv* env, const char* name);
ERL_NIF_TERM make_binary(ErlNifEnv* env, std::string_view text);
ERL_NIF_TERM make_ok(ErlNifEnv* env, ERL_NIF_TERM value);
// The text of an atom; false when `term` is not one.
bool atom_text(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out);

// Decoders throw nxv::Error(InvalidArgument) naming `what` when the term does not fit.
std::string get_string(ErlNifEnv* env, ERL_NIF_TERM term, const char* what);  // binary or atom
int64_t get_int64(ErlNifEnv* env, ERL_NIF_TERM term, const char* what);
// Nx type: {:f, 32}, {:bf, 16}, ... or a string/atom spelled the Nx way ("f32").
nxv::DType get_dtype(ErlNifEnv* env, ERL_NIF_TERM term);
// Shape: tuple or list of non-negative integers.
nxv::Shape get_shape(ErlNifEnv* env, ERL_NIF_TERM term);
std::vector<int64_t> get_int_list(ErlNifEnv* env, ERL_NIF_TERM term, const char* what);

}  // namespace nxv_nif
