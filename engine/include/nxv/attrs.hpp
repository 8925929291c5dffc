// Op attributes: a callback's options, decoded once into a family's typed struct. Where the
// options come from is an AttrReader: Erlang terms in the NIF, JSON fixtures in the tests.
#pragma once
#include <any>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nxv/error.hpp"

namespace nxv {

// A number as Nx hands it over: integer, float (with Nx's :nan/:infinity/:neg_infinity
// spelled as floats) or complex.
struct AttrNumber {
  enum class Kind { Int, UInt, Float, Complex } kind = Kind::Int;
  int64_t i = 0;
  uint64_t u = 0;
  double re = 0, im = 0;
};

class AttrReader {
 public:
  virtual ~AttrReader() = default;
  // Absent and nil both read as missing.
  virtual bool has(std::string_view key) const = 0;
  virtual int64_t integer(std::string_view key) const = 0;
  virtual bool boolean(std::string_view key) const = 0;
  virtual AttrNumber number(std::string_view key) const = 0;
  virtual std::string atom(std::string_view key) const = 0;  // atoms and strings
  virtual std::vector<int64_t> integers(std::string_view key) const = 0;
  virtual std::vector<std::vector<int64_t>> integer_lists(std::string_view key) const = 0;

 protected:
  [[noreturn]] static void bad(std::string_view key, std::string_view what) {
    throw Error(ErrorKind::InvalidArgument, "option " + std::string(key) + ": expected " + std::string(what));
  }
};

// A reader with no options (ops that take none).
class NoAttrReader final : public AttrReader {
 public:
  bool has(std::string_view) const override { return false; }
  int64_t integer(std::string_view k) const override { bad(k, "an integer (none given)"); }
  bool boolean(std::string_view k) const override { bad(k, "a boolean (none given)"); }
  AttrNumber number(std::string_view k) const override { bad(k, "a number (none given)"); }
  std::string atom(std::string_view k) const override { bad(k, "an atom (none given)"); }
  std::vector<int64_t> integers(std::string_view k) const override { bad(k, "integers (none given)"); }
  std::vector<std::vector<int64_t>> integer_lists(std::string_view k) const override {
    bad(k, "lists of integers (none given)");
  }
};

// The decoded attributes of one call: empty for ops without options, else the family's struct.
class Attrs {
 public:
  Attrs() = default;
  template <typename T>
  static Attrs of(T value) {
    Attrs a;
    a.value_ = std::move(value);
    return a;
  }
  bool empty() const { return !value_.has_value(); }
  // The family's struct; InvalidArgument when the call carries another op's attributes.
  template <typename T>
  const T& as() const {
    const T* p = std::any_cast<T>(&value_);
    if (!p) throw Error(ErrorKind::InvalidArgument, "op attributes of the wrong kind (decode them with decode_attrs)");
    return *p;
  }
  // The family's struct where the call carries one of type T, else null.
  template <typename T>
  const T* try_as() const {
    return std::any_cast<T>(&value_);
  }

 private:
  std::any value_;
};

}  // namespace nxv
