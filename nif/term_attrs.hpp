// Callback options (an Elixir keyword list or map) read as op attributes: the NIF's side of
// nxv::AttrReader. The op's family decodes them into its typed struct once per call.
#pragma once
#include <erl_nif.h>

#include <string>
#include <utility>
#include <vector>

#include "nxv/attrs.hpp"

namespace nxv_nif {

class TermAttrReader final : public nxv::AttrReader {
 public:
  // `options`: [] or nil (no options), a keyword list (first occurrence of a key wins), or a map.
  TermAttrReader(ErlNifEnv* env, ERL_NIF_TERM options);

  bool has(std::string_view key) const override;
  int64_t integer(std::string_view key) const override;
  bool boolean(std::string_view key) const override;
  nxv::AttrNumber number(std::string_view key) const override;
  std::string atom(std::string_view key) const override;
  std::vector<int64_t> integers(std::string_view key) const override;
  std::vector<std::vector<int64_t>> integer_lists(std::string_view key) const override;

 private:
  const ERL_NIF_TERM* find(std::string_view key) const;
  ERL_NIF_TERM at(std::string_view key) const;
  ErlNifEnv* env_;
  std::vector<std::pair<std::string, ERL_NIF_TERM>> entries_;
};

}  // namespace nxv_nif
