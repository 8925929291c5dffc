// How each Nx type is stored, loaded and computed in the generated GLSL.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device/device_core.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

using Defines = std::vector<std::pair<std::string, std::string>>;

std::string glsl_storage_type(DType t);
// Four-element vector of the storage type, for 4-wide loads; "" where there is none (complex).
std::string glsl_vec4_type(DType t);  // "u8vec4", "f16vec4", "u16vec4" (bf16), "dvec4"...
// The vector a 4-wide load is converted to in registers: the storage vector itself, except f16
// (16-bit storage without shaderFloat16 allows f16 values only in whole-vector conversions).
std::string glsl_vec4_register_type(DType t);
// The same for one element read on its own (a splatted scalar): float for f16.
std::string glsl_scalar_register_type(DType t);
// Alignment in bytes of a 4-element group of `t`.
uint32_t vec4_alignment(DType t);
// A type kernels compute and accumulate in: 32 or 64-bit integers and floats, complex as
// (re, im) vectors. Compared as values; its GLSL text is emitted through glsl_name.
enum class AccType : uint8_t { F32, F64, S32, U32, S64, U64, C64, C128 };

// "float", "double", "int", "uint", "int64_t", "uint64_t", "vec2", "dvec2".
std::string glsl_name(AccType a);
uint32_t acc_bytes(AccType a);
bool is_floating(AccType a);  // real floats: F32, F64
bool is_complex(AccType a);   // C64, C128
bool is_int64(AccType a);     // S64, U64
bool needs_f64(AccType a);    // F64, C128
// Type used for arithmetic on values of `t`: f32 for the narrow floats, 32-bit integers for
// the narrow integers, else the type's own width.
AccType acc_of(DType t);
// Orders accumulator types by GLSL name: declarations emitted in this order keep the text
// (and so the kernel cache keys) they had when keyed by name.
struct AccByGlslName {
  bool operator()(AccType a, AccType b) const { return glsl_name(a) < glsl_name(b); }
};

// glsl_name(acc_of(t)).
std::string glsl_compute_type(DType t);
// Expression converting storage value `x` of type `from` to compute type `to_compute` (a
// GLSL type name: elementwise loads name storage types too).
std::string glsl_load(DType from, const std::string& to_compute);
std::string glsl_load(DType from, AccType to_compute);
// Expression converting compute value `v` to storage of type `to`.
std::string glsl_store(DType to);

// Tracks the capabilities a kernel needs and checks them against the device.
class FeatureSet {
 public:
  void add_type(DType t);
  void need_int64() { int64_ = true; }
  void need_f64() { f64_ = true; }
  bool uses_f64() const { return f64_; }
  // Adds what `other` needs.
  void merge(const FeatureSet& other) {
    storage8_ |= other.storage8_, storage16_ |= other.storage16_, int64_ |= other.int64_, f64_ |= other.f64_;
  }
  // Throws Error(Unsupported) naming the first missing feature.
  void check(const DeviceCore& core, const char* op) const;
  void add_defines(Defines& defines) const;
  auto fields() const { return std::tie(storage8_, storage16_, int64_, f64_); }

 private:
  bool storage8_ = false, storage16_ = false, int64_ = false, f64_ = false;
};

}  // namespace nxv
