// Conformance fixtures: cases generated from Nx.BinaryBackend by `mix nx_vulkan.fixtures`
// (test/fixtures/*.json, format described in test/fixtures/README.md), and the comparison of
// an engine result with a fixture's expected tensor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nxv/dtype.hpp"
#include "nxv/tensor.hpp"

namespace nxv::fixtures {

struct HostTensor {
  std::string type_name;         // Nx spelling, kept even when the engine has no such type
  std::optional<DType> type;     // nullopt: not an engine type
  Shape shape;
  std::vector<std::byte> bytes;  // row-major, native little-endian

  int64_t size() const;
  std::string describe() const;  // "f32[2,3]"
};

struct Case {
  std::string file;  // fixture file name, e.g. "elementwise_binary.json"
  size_t index = 0;  // position in the file's "cases"
  std::string op;
  std::string out_type_name;
  std::optional<DType> out_type;
  Shape out_shape;
  std::vector<HostTensor> inputs;
  nlohmann::json options;
  HostTensor expected;
  int64_t tolerance_ulp = 0;

  // "elementwise_binary.json#12 add out f32[2,3] inputs (s32[3], f32[2,3]) options {}"
  std::string describe() const;
  // Whether every type in the case is an engine type.
  bool has_engine_types() const;
};

// The fixtures directory: env NXV_FIXTURES_DIR, else the compile definition NXV_FIXTURES_DIR,
// else "test/fixtures".
std::string fixtures_dir();

// Every case of every *.json in `dir`, files in name order. Throws std::runtime_error on an
// unreadable or malformed file.
std::vector<Case> load_dir(const std::string& dir);
std::vector<Case> load_file(const std::string& path);

// Compares `got` (bytes of a tensor of the expected type and shape) with `expected`:
// integers bit-exact; floats within `tolerance_ulp` ulps (NaN matches any NaN, infinities
// exactly, and with tolerance 0 the sign of zero must match); complex per component, where
// a component may also differ by `tolerance_ulp` ulps of the larger-magnitude component of
// the expected value. Returns one line per differing element (at most `max_report`, plus a
// count line), empty when equal.
std::vector<std::string> compare(const HostTensor& expected, const std::vector<std::byte>& got,
                                 int64_t tolerance_ulp, size_t max_report = 8,
                                 const std::vector<HostTensor>* inputs = nullptr);

// An 8-bit float as Nx.Floating reads it: {:f, 8} (E5M2, exponent 0 read as 2^-15 (1 + m / 4),
// not as subnormals) and {:f8_e4m3fn, 8}.
double f8_to_double(uint8_t b);
double f8e4m3fn_to_double(uint8_t b);

// One element as text: "1.5 (0x3fc00000)", "-3", "(1, -0) (0x..)".
std::string format_element(const std::string& type_name, const std::byte* p);

}  // namespace nxv::fixtures
