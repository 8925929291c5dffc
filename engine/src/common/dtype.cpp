#include "nxv/dtype.hpp"

#include <string>

#include "nxv/error.hpp"

namespace nxv {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::U8: case DType::S8: case DType::F8: case DType::F8E4M3FN: return 1;
    case DType::U16: case DType::S16: case DType::F16: case DType::BF16: return 2;
    case DType::U32: case DType::S32: case DType::F32: return 4;
    case DType::U64: case DType::S64: case DType::F64: case DType::C64: return 8;
    case DType::C128: return 16;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::U8: return "u8";
    case DType::U16: return "u16";
    case DType::U32: return "u32";
    case DType::U64: return "u64";
    case DType::S8: return "s8";
    case DType::S16: return "s16";
    case DType::S32: return "s32";
    case DType::S64: return "s64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::C64: return "c64";
    case DType::C128: return "c128";
    case DType::F8: return "f8";
    case DType::F8E4M3FN: return "f8_e4m3fn";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  throw Error(ErrorKind::InvalidArgument, "unknown tensor type: " + std::string(name));
}

bool is_float(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64 || t == DType::F8 ||
         t == DType::F8E4M3FN;
}
bool is_complex(DType t) { return t == DType::C64 || t == DType::C128; }
bool is_integer(DType t) { return !is_float(t) && !is_complex(t); }
bool is_signed(DType t) {
  return !(t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64);
}

}  // namespace nxv
