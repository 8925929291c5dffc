#include "kernels/glsl_types.hpp"

#include <algorithm>

#include "nxv/error.hpp"

namespace nxv {

std::string glsl_storage_type(DType t) {
  switch (t) {
    case DType::U8: return "uint8_t";
    case DType::S8: return "int8_t";
    case DType::U16: return "uint16_t";
    case DType::S16: return "int16_t";
    case DType::U32: return "uint";
    case DType::S32: return "int";
    case DType::U64: return "uint64_t";
    case DType::S64: return "int64_t";
    case DType::F16: return "float16_t";
    case DType::BF16: return "uint16_t";
    case DType::F8: case DType::F8E4M3FN: return "uint8_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::C64: return "vec2";
    case DType::C128: return "dvec2";
    default: throw Error(ErrorKind::Unsupported, "type " + std::string(dtype_name(t)) + " has no GLSL storage yet");
  }
}

std::string glsl_vec4_type(DType t) {
  switch (t) {
    case DType::U8: case DType::F8: case DType::F8E4M3FN: return "u8vec4";
    case DType::S8: return "i8vec4";
    case DType::U16: case DType::BF16: return "u16vec4";
    case DType::S16: return "i16vec4";
    case DType::U32: return "uvec4";
    case DType::S32: return "ivec4";
    case DType::U64: return "u64vec4";
    case DType::S64: return "i64vec4";
    case DType::F16: return "f16vec4";
    case DType::F32: return "vec4";
    case DType::F64: return "dvec4";
    default: return "";
  }
}

std::string glsl_vec4_register_type(DType t) { return t == DType::F16 ? "vec4" : glsl_vec4_type(t); }

std::string glsl_scalar_register_type(DType t) { return t == DType::F16 ? "float" : glsl_storage_type(t); }

uint32_t vec4_alignment(DType t) { return uint32_t(std::min<size_t>(16, 4 * dtype_size(t))); }

std::string glsl_name(AccType a) {
  switch (a) {
    case AccType::F32: return "float";
    case AccType::F64: return "double";
    case AccType::S32: return "int";
    case AccType::U32: return "uint";
    case AccType::S64: return "int64_t";
    case AccType::U64: return "uint64_t";
    case AccType::C64: return "vec2";  // (re, im)
    case AccType::C128: return "dvec2";
  }
  return "";
}

uint32_t acc_bytes(AccType a) {
  switch (a) {
    case AccType::F32: case AccType::S32: case AccType::U32: return 4;
    case AccType::F64: case AccType::S64: case AccType::U64: case AccType::C64: return 8;
    case AccType::C128: return 16;
  }
  return 4;
}

bool is_floating(AccType a) { return a == AccType::F32 || a == AccType::F64; }
bool is_complex(AccType a) { return a == AccType::C64 || a == AccType::C128; }
bool is_int64(AccType a) { return a == AccType::S64 || a == AccType::U64; }
bool needs_f64(AccType a) { return a == AccType::F64 || a == AccType::C128; }

AccType acc_of(DType t) {
  switch (t) {
    case DType::U8: case DType::U16: case DType::U32: return AccType::U32;
    case DType::S8: case DType::S16: case DType::S32: return AccType::S32;
    case DType::U64: return AccType::U64;
    case DType::S64: return AccType::S64;
    case DType::F8: case DType::F8E4M3FN: case DType::F16: case DType::BF16: case DType::F32:
      return AccType::F32;  // Nx computes wider too
    case DType::F64: return AccType::F64;
    case DType::C64: return AccType::C64;
    case DType::C128: return AccType::C128;
    default: throw Error(ErrorKind::Unsupported, "type " + std::string(dtype_name(t)) + " has no GLSL compute type yet");
  }
}

std::string glsl_compute_type(DType t) { return glsl_name(acc_of(t)); }

std::string glsl_load(DType from, const std::string& to) {
  std::string x = from == DType::BF16       ? "nxv_bf16_load(x)"
                  : from == DType::F8       ? "nxv_f8_load(x)"
                  : from == DType::F8E4M3FN ? "nxv_f8e4m3fn_load(x)"
                                            : "x";
  bool to_complex = to == "vec2" || to == "dvec2";
  if (to_complex && !is_complex(from)) return to + "(" + (to == "vec2" ? "float(" : "double(") + x + "), 0)";
  if (!to_complex && is_complex(from)) return to + "(" + x + ".x)";
  return to + "(" + x + ")";
}

std::string glsl_load(DType from, AccType to) { return glsl_load(from, glsl_name(to)); }

std::string glsl_store(DType to) {
  if (to == DType::BF16) return "nxv_bf16_store(float(v))";
  if (to == DType::F16) return "float16_t(float(v))";  // v may be a double (f64 compute)
  if (to == DType::F8) return "nxv_f8_store(float(v))";
  if (to == DType::F8E4M3FN) return "nxv_f8e4m3fn_store(float(v))";
  return glsl_storage_type(to) + "(v)";
}

void FeatureSet::add_type(DType t) {
  switch (dtype_size(t)) {
    case 1: storage8_ = true; break;
    case 2: storage16_ = true; break;
    default: break;
  }
  if (t == DType::U64 || t == DType::S64) int64_ = true;
  if (t == DType::F64 || t == DType::C128) f64_ = true;
}

void FeatureSet::check(const DeviceCore& core, const char* op) const {
  const auto& f = core.info().features;
  auto missing = [&](const char* what) {
    throw Error(ErrorKind::Unsupported, std::string(op) + " needs " + what + ", which device '" + core.info().name +
                                            "' lacks or NX_VULKAN_DISABLE turned off");
  };
  if (storage8_ && !(f.storage8 && f.int8)) missing("8-bit storage and int8 arithmetic");
  if (storage16_ && !(f.storage16 && f.int16)) missing("16-bit storage and int16 arithmetic");
  if (int64_ && !f.int64) missing("64-bit integers (int64)");
  if (f64_ && !f.float64) missing("64-bit floats (f64)");
}

void FeatureSet::add_defines(Defines& d) const {
  d.emplace_back("NXV_STORAGE8", storage8_ ? "1" : "0");
  d.emplace_back("NXV_STORAGE16", storage16_ ? "1" : "0");
  d.emplace_back("NXV_INT64", int64_ ? "1" : "0");
  d.emplace_back("NXV_F64", f64_ ? "1" : "0");
}

}  // namespace nxv
