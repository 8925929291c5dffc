#include "terms.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "nxv/error.hpp"

namespace nxv_nif {

Atoms atoms;

ERL_NIF_TERM make_atom(ErlNifEnv* env, const char* name) {
  ERL_NIF_TERM atom;
  if (enif_make_existing_atom(env, name, &atom, ERL_NIF_LATIN1)) return atom;
  return enif_make_atom(env, name);
}

void make_atoms(ErlNifEnv* env) {
  atoms.ok = make_atom(env, "ok");
  atoms.error = make_atom(env, "error");
  atoms.nil = make_atom(env, "nil");
  atoms.true_ = make_atom(env, "true");
  atoms.false_ = make_atom(env, "false");
  atoms.already_deallocated = make_atom(env, "already_deallocated");
  atoms.invalid_argument = make_atom(env, "invalid_argument");
  atoms.unsupported = make_atom(env, "unsupported");
  atoms.out_of_memory = make_atom(env, "out_of_memory");
  atoms.deallocated = make_atom(env, "deallocated");
  atoms.driver = make_atom(env, "driver");
}

ERL_NIF_TERM make_binary(ErlNifEnv* env, std::string_view text) {
  ERL_NIF_TERM term;
  unsigned char* data = enif_make_new_binary(env, text.size(), &term);
  if (!text.empty()) std::memcpy(data, text.data(), text.size());
  return term;
}

ERL_NIF_TERM make_ok(ErlNifEnv* env, ERL_NIF_TERM value) {
  return enif_make_tuple2(env, atoms.ok, value);
}

bool atom_text(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out) {
  unsigned length = 0;
  if (!enif_get_atom_length(env, term, &length, ERL_NIF_LATIN1)) return false;
  out.resize(length + 1);
  if (!enif_get_atom(env, term, out.data(), length + 1, ERL_NIF_LATIN1)) return false;
  out.resize(length);
  return true;
}

namespace {

[[noreturn]] void bad(const std::string& message) {
  throw nxv::Error(nxv::ErrorKind::InvalidArgument, message);
}


bool binary_text(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out) {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, term, &bin)) return false;
  out.assign(reinterpret_cast<const char*>(bin.data), bin.size);
  return true;
}



}  // namespace

std::string get_string(ErlNifEnv* env, ERL_NIF_TERM term, const char* what) {
  std::string text;
  if (binary_text(env, term, text) || atom_text(env, term, text)) return text;
  bad(std::string("expected a string for ") + what);
}

int64_t get_int64(ErlNifEnv* env, ERL_NIF_TERM term, const char* what) {
  ErlNifSInt64 value;
  if (!enif_get_int64(env, term, &value)) bad(std::string("expected an integer for ") + what);
  return static_cast<int64_t>(value);
}

nxv::DType get_dtype(ErlNifEnv* env, ERL_NIF_TERM term) {
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  if (enif_get_tuple(env, term, &arity, &elems)) {
    std::string kind;
    ErlNifSInt64 bits;
    if (arity != 2 || !atom_text(env, elems[0], kind) || !enif_get_int64(env, elems[1], &bits))
      bad("expected a type like {:f, 32}");
    // {:f8_e4m3fn, 8}: the kind is the whole name.
    return nxv::parse_dtype(kind.find('_') != std::string::npos ? kind : kind + std::to_string(bits));
  }
  return nxv::parse_dtype(get_string(env, term, "type"));
}

std::vector<int64_t> get_int_list(ErlNifEnv* env, ERL_NIF_TERM term, const char* what) {
  std::vector<int64_t> out;
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  if (enif_get_tuple(env, term, &arity, &elems)) {
    out.reserve(arity);
    for (int i = 0; i < arity; ++i) out.push_back(get_int64(env, elems[i], what));
    return out;
  }
  unsigned length = 0;
  if (!enif_get_list_length(env, term, &length))
    bad(std::string("expected a list or tuple of integers for ") + what);
  out.reserve(length);
  ERL_NIF_TERM head, tail = term;
  while (enif_get_list_cell(env, tail, &head, &tail)) out.push_back(get_int64(env, head, what));
  return out;
}

nxv::Shape get_shape(ErlNifEnv* env, ERL_NIF_TERM term) {
  nxv::Shape shape = get_int_list(env, term, "shape");
  for (int64_t d : shape)
    if (d < 0) bad("shape dimensions must be non-negative");
  return shape;
}

}  // namespace nxv_nif
