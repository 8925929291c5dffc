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

namespace {

[[noreturn]] void bad(const std::string& message) {
  throw nxv::Error(nxv::ErrorKind::InvalidArgument, message);
}

bool atom_text(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out) {
  unsigned length = 0;
  if (!enif_get_atom_length(env, term, &length, ERL_NIF_LATIN1)) return false;
  out.resize(length + 1);
  if (!enif_get_atom(env, term, out.data(), length + 1, ERL_NIF_LATIN1)) return false;
  out.resize(length);
  return true;
}

bool binary_text(ErlNifEnv* env, ERL_NIF_TERM term, std::string& out) {
  ErlNifBinary bin;
  if (!enif_inspect_binary(env, term, &bin)) return false;
  out.assign(reinterpret_cast<const char*>(bin.data), bin.size);
  return true;
}

// A keyword list: non-empty, every element a 2-tuple whose first element is an atom.
bool is_keyword(ErlNifEnv* env, ERL_NIF_TERM list) {
  unsigned length = 0;
  if (!enif_get_list_length(env, list, &length) || length == 0) return false;
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    int arity = 0;
    const ERL_NIF_TERM* elems = nullptr;
    if (!enif_get_tuple(env, head, &arity, &elems) || arity != 2 || !enif_is_atom(env, elems[0]))
      return false;
  }
  return true;
}

std::string key_text(ErlNifEnv* env, ERL_NIF_TERM key) {
  std::string text;
  if (atom_text(env, key, text) || binary_text(env, key, text)) return text;
  ErlNifSInt64 i;
  if (enif_get_int64(env, key, &i)) return std::to_string(i);
  bad("option keys must be atoms, strings or integers");
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

nlohmann::json term_to_json(ErlNifEnv* env, ERL_NIF_TERM term) {
  using nlohmann::json;
  switch (enif_term_type(env, term)) {
    case ERL_NIF_TERM_TYPE_ATOM: {
      std::string text;
      atom_text(env, term, text);
      if (text == "nil") return nullptr;
      if (text == "true") return true;
      if (text == "false") return false;
      return text;
    }
    case ERL_NIF_TERM_TYPE_INTEGER: {
      ErlNifSInt64 i;
      if (enif_get_int64(env, term, &i)) return static_cast<int64_t>(i);
      ErlNifUInt64 u;
      if (enif_get_uint64(env, term, &u)) return static_cast<uint64_t>(u);
      bad("integer option out of the 64-bit range");
    }
    case ERL_NIF_TERM_TYPE_FLOAT: {
      double d;
      enif_get_double(env, term, &d);
      return d;
    }
    case ERL_NIF_TERM_TYPE_BITSTRING: {
      std::string text;
      if (!binary_text(env, term, text)) bad("bitstring options are not supported");
      return text;
    }
    case ERL_NIF_TERM_TYPE_TUPLE: {
      int arity = 0;
      const ERL_NIF_TERM* elems = nullptr;
      enif_get_tuple(env, term, &arity, &elems);
      json array = json::array();
      for (int i = 0; i < arity; ++i) array.push_back(term_to_json(env, elems[i]));
      return array;
    }
    case ERL_NIF_TERM_TYPE_LIST: {
      if (is_keyword(env, term)) {
        json object = json::object();
        ERL_NIF_TERM head, tail = term;
        while (enif_get_list_cell(env, tail, &head, &tail)) {
          int arity = 0;
          const ERL_NIF_TERM* kv = nullptr;
          enif_get_tuple(env, head, &arity, &kv);
          std::string key = key_text(env, kv[0]);
          // Keyword semantics: the first occurrence of a key wins.
          if (!object.contains(key)) object[key] = term_to_json(env, kv[1]);
        }
        return object;
      }
      json array = json::array();
      ERL_NIF_TERM head, tail = term;
      while (enif_get_list_cell(env, tail, &head, &tail)) array.push_back(term_to_json(env, head));
      if (!enif_is_empty_list(env, tail)) bad("improper lists are not supported in options");
      return array;
    }
    case ERL_NIF_TERM_TYPE_MAP: {
      json object = json::object();
      ErlNifMapIterator it;
      if (!enif_map_iterator_create(env, term, &it, ERL_NIF_MAP_ITERATOR_FIRST))
        bad("could not iterate an options map");
      ERL_NIF_TERM key, value;
      try {
        while (enif_map_iterator_get_pair(env, &it, &key, &value)) {
          std::string k = key_text(env, key);
          if (k != "__struct__") object[k] = term_to_json(env, value);
          enif_map_iterator_next(env, &it);
        }
      } catch (...) {
        enif_map_iterator_destroy(env, &it);
        throw;
      }
      enif_map_iterator_destroy(env, &it);
      return object;
    }
    default:
      bad("options may hold only atoms, numbers, strings, lists, tuples and maps");
  }
}

nlohmann::json options_to_json(ErlNifEnv* env, ERL_NIF_TERM term) {
  if (enif_is_empty_list(env, term)) return nlohmann::json::object();
  ERL_NIF_TERM nil = atoms.nil;
  if (enif_is_identical(term, nil)) return nlohmann::json::object();
  nlohmann::json options = term_to_json(env, term);
  if (!options.is_object()) bad("options must be a keyword list or a map");
  return options;
}

ERL_NIF_TERM json_to_term(ErlNifEnv* env, const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return atoms.nil;
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? atoms.true_ : atoms.false_;
    case nlohmann::json::value_t::number_integer:
      return enif_make_int64(env, value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return enif_make_uint64(env, value.get<uint64_t>());
    case nlohmann::json::value_t::number_float: {
      double d = value.get<double>();
      if (!std::isfinite(d)) return atoms.nil;
      return enif_make_double(env, d);
    }
    case nlohmann::json::value_t::string:
      return make_binary(env, value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      std::vector<ERL_NIF_TERM> items;
      items.reserve(value.size());
      for (const auto& item : value) items.push_back(json_to_term(env, item));
      return enif_make_list_from_array(env, items.data(), static_cast<unsigned>(items.size()));
    }
    case nlohmann::json::value_t::object: {
      std::vector<ERL_NIF_TERM> keys, values;
      for (const auto& [k, v] : value.items()) {
        keys.push_back(make_atom(env, k.c_str()));
        values.push_back(json_to_term(env, v));
      }
      ERL_NIF_TERM map;
      if (!enif_make_map_from_arrays(env, keys.data(), values.data(), keys.size(), &map))
        return enif_make_new_map(env);
      return map;
    }
    default:
      return atoms.nil;
  }
}

}  // namespace nxv_nif
