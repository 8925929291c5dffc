#include "term_attrs.hpp"

#include <cmath>
#include <limits>

#include "terms.hpp"

namespace nxv_nif {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw nxv::Error(nxv::ErrorKind::InvalidArgument, message); }

std::vector<int64_t> int_list(ErlNifEnv* env, ERL_NIF_TERM term, bool& ok) {
  std::vector<int64_t> out;
  ok = true;
  int arity = 0;
  const ERL_NIF_TERM* elems = nullptr;
  ErlNifSInt64 v;
  if (enif_get_tuple(env, term, &arity, &elems)) {
    for (int i = 0; i < arity && ok; ++i) ok = enif_get_int64(env, elems[i], &v) && (out.push_back(v), true);
    return out;
  }
  ERL_NIF_TERM head, tail = term;
  if (!enif_is_list(env, term)) ok = false;
  while (ok && enif_get_list_cell(env, tail, &head, &tail)) ok = enif_get_int64(env, head, &v) && (out.push_back(v), true);
  return out;
}

}  // namespace

TermAttrReader::TermAttrReader(ErlNifEnv* env, ERL_NIF_TERM options) : env_(env) {
  if (enif_is_empty_list(env, options) || enif_is_identical(options, atoms.nil)) return;
  std::string key;
  if (enif_is_map(env, options)) {
    ErlNifMapIterator it;
    if (!enif_map_iterator_create(env, options, &it, ERL_NIF_MAP_ITERATOR_FIRST)) invalid("could not read an options map");
    ERL_NIF_TERM k, v;
    while (enif_map_iterator_get_pair(env, &it, &k, &v)) {
      if (atom_text(env, k, key) && key != "__struct__") entries_.emplace_back(key, v);
      enif_map_iterator_next(env, &it);
    }
    enif_map_iterator_destroy(env, &it);
    return;
  }
  ERL_NIF_TERM head, tail = options;
  if (!enif_is_list(env, options)) invalid("options must be a keyword list or a map");
  while (enif_get_list_cell(env, tail, &head, &tail)) {
    int arity = 0;
    const ERL_NIF_TERM* kv = nullptr;
    if (!enif_get_tuple(env, head, &arity, &kv) || arity != 2 || !atom_text(env, kv[0], key))
      invalid("options must be a keyword list or a map");
    if (!find(key)) entries_.emplace_back(key, kv[1]);
  }
}

const ERL_NIF_TERM* TermAttrReader::find(std::string_view key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

bool TermAttrReader::has(std::string_view key) const {
  const ERL_NIF_TERM* v = find(key);
  return v && !enif_is_identical(*v, atoms.nil);
}

ERL_NIF_TERM TermAttrReader::at(std::string_view key) const {
  if (!has(key)) bad(key, "a value (missing)");
  return *find(key);
}

int64_t TermAttrReader::integer(std::string_view key) const {
  ErlNifSInt64 v;
  if (!enif_get_int64(env_, at(key), &v)) bad(key, "an integer");
  return v;
}

bool TermAttrReader::boolean(std::string_view key) const {
  ERL_NIF_TERM v = at(key);
  if (enif_is_identical(v, atoms.true_)) return true;
  if (enif_is_identical(v, atoms.false_)) return false;
  bad(key, "a boolean");
}

nxv::AttrNumber TermAttrReader::number(std::string_view key) const {
  ERL_NIF_TERM v = at(key);
  nxv::AttrNumber n;
  ErlNifSInt64 i;
  ErlNifUInt64 u;
  // A float, an integer as a float, or Nx's :nan / :infinity / :neg_infinity.
  auto real = [&](ERL_NIF_TERM t, double& out) {
    std::string text;
    if (enif_get_double(env_, t, &out)) return true;
    if (enif_get_int64(env_, t, &i)) return out = double(i), true;
    if (!atom_text(env_, t, text)) return false;
    if (text == "nan") out = std::numeric_limits<double>::quiet_NaN();
    else if (text == "infinity") out = INFINITY;
    else if (text == "neg_infinity") out = -INFINITY;
    else return false;
    return true;
  };
  if (enif_get_int64(env_, v, &i)) {
    n.i = i;
  } else if (enif_get_uint64(env_, v, &u)) {
    n.kind = nxv::AttrNumber::Kind::UInt;
    n.u = u;
  } else if (real(v, n.re)) {
    n.kind = nxv::AttrNumber::Kind::Float;
  } else if (enif_is_list(env_, v)) {  // a complex number as [re: x, im: y]
    n.kind = nxv::AttrNumber::Kind::Complex;
    ERL_NIF_TERM head, tail = v;
    int parts = 0;
    while (enif_get_list_cell(env_, tail, &head, &tail)) {
      int arity = 0;
      const ERL_NIF_TERM* kv = nullptr;
      std::string part;
      if (!enif_get_tuple(env_, head, &arity, &kv) || arity != 2 || !atom_text(env_, kv[0], part) ||
          (part != "re" && part != "im") || !real(kv[1], part == "re" ? n.re : n.im))
        bad(key, "a number or [re: number, im: number]");
      ++parts;
    }
    if (parts != 2) bad(key, "a number or [re: number, im: number]");
  } else {
    bad(key, "a number");
  }
  return n;
}

std::string TermAttrReader::atom(std::string_view key) const {
  std::string text;
  ERL_NIF_TERM v = at(key);
  ErlNifBinary bin;
  if (atom_text(env_, v, text)) return text;
  if (enif_inspect_binary(env_, v, &bin)) return std::string(reinterpret_cast<const char*>(bin.data), bin.size);
  bad(key, "an atom");
}

std::vector<int64_t> TermAttrReader::integers(std::string_view key) const {
  bool ok = false;
  auto out = int_list(env_, at(key), ok);
  if (!ok) bad(key, "a list or tuple of integers");
  return out;
}

std::vector<std::vector<int64_t>> TermAttrReader::integer_lists(std::string_view key) const {
  std::vector<std::vector<int64_t>> out;
  ERL_NIF_TERM head, tail = at(key);
  if (!enif_is_list(env_, tail)) bad(key, "a list of lists or tuples of integers");
  while (enif_get_list_cell(env_, tail, &head, &tail)) {
    bool ok = false;
    out.push_back(int_list(env_, head, ok));
    if (!ok) bad(key, "a list of lists or tuples of integers");
  }
  return out;
}

}  // namespace nxv_nif
