// Fixture options (JSON, see test/fixtures/README.md) read as op attributes: the tests' side of
// nxv::AttrReader, as the NIF reads Erlang terms. JSON lives in the tests only.
#pragma once
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "nxv/attrs.hpp"

namespace nxv::test {

class JsonAttrReader final : public AttrReader {
 public:
  explicit JsonAttrReader(const nlohmann::json& options) : o_(options) {}

  bool has(std::string_view key) const override {
    auto it = o_.find(std::string(key));
    return it != o_.end() && !it->is_null();
  }
  int64_t integer(std::string_view key) const override {
    const auto& v = at(key);
    if (!v.is_number_integer()) bad(key, "an integer");
    return v.get<int64_t>();
  }
  bool boolean(std::string_view key) const override {
    const auto& v = at(key);
    if (!v.is_boolean()) bad(key, "a boolean");
    return v.get<bool>();
  }
  AttrNumber number(std::string_view key) const override {
    const auto& v = at(key);
    AttrNumber n;
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
      n.kind = AttrNumber::Kind::UInt;
      n.u = v.get<uint64_t>();
    } else if (v.is_number_integer()) {
      n.kind = AttrNumber::Kind::Int;
      n.i = v.get<int64_t>();
    } else if (v.is_number_float()) {
      n.kind = AttrNumber::Kind::Float;
      n.re = v.get<double>();
    } else if (v.is_string()) {  // Nx's :nan, :infinity, :neg_infinity
      std::string s = v.get<std::string>();
      n.kind = AttrNumber::Kind::Float;
      if (s == "nan") n.re = std::numeric_limits<double>::quiet_NaN();
      else if (s == "infinity") n.re = INFINITY;
      else if (s == "neg_infinity") n.re = -INFINITY;
      else bad(key, "a number");
    } else if (v.is_object() && v.contains("re") && v.contains("im")) {
      n.kind = AttrNumber::Kind::Complex;
      n.re = v["re"].get<double>();
      n.im = v["im"].get<double>();
    } else {
      bad(key, "a number");
    }
    return n;
  }
  std::string atom(std::string_view key) const override {
    const auto& v = at(key);
    if (!v.is_string()) bad(key, "an atom");
    return v.get<std::string>();
  }
  std::vector<int64_t> integers(std::string_view key) const override {
    const auto& v = at(key);
    if (!v.is_array()) bad(key, "a list of integers");
    std::vector<int64_t> out;
    for (const auto& e : v) {
      if (!e.is_number_integer()) bad(key, "a list of integers");
      out.push_back(e.get<int64_t>());
    }
    return out;
  }
  std::vector<std::vector<int64_t>> integer_lists(std::string_view key) const override {
    const auto& v = at(key);
    if (!v.is_array()) bad(key, "a list of lists of integers");
    std::vector<std::vector<int64_t>> out;
    for (const auto& row : v) {
      std::vector<int64_t> r;
      if (!row.is_array()) bad(key, "a list of lists of integers");
      for (const auto& e : row) r.push_back(e.get<int64_t>());
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  const nlohmann::json& at(std::string_view key) const {
    auto it = o_.find(std::string(key));
    if (it == o_.end() || it->is_null()) bad(key, "a value (missing)");
    return *it;
  }
  const nlohmann::json& o_;
};

}  // namespace nxv::test
