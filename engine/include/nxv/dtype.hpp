// Nx element types as the engine sees them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nxv {

// F8 is Nx's {:f, 8} (E5M2) and F8E4M3FN its {:f8_e4m3fn, 8}; both are one byte.
enum class DType : uint8_t { U8, U16, U32, U64, S8, S16, S32, S64, F16, BF16, F32, F64, C64, C128, F8, F8E4M3FN };

inline constexpr DType kAllDTypes[] = {DType::U8,  DType::U16,  DType::U32, DType::U64, DType::S8,
                                       DType::S16, DType::S32,  DType::S64, DType::F16, DType::BF16,
                                       DType::F32, DType::F64,  DType::C64, DType::C128,
                                       DType::F8,  DType::F8E4M3FN};

size_t dtype_size(DType t);
// Nx's spelling: "u8", "s32", "f16", "bf16", "c64", "f8", "f8_e4m3fn", ...
std::string_view dtype_name(DType t);
// Throws nxv::Error(InvalidArgument) for an unknown name.
DType parse_dtype(std::string_view name);

bool is_float(DType t);    // f8, f8_e4m3fn, f16, bf16, f32, f64
bool is_complex(DType t);  // c64, c128
bool is_integer(DType t);  // u*, s*
bool is_signed(DType t);   // s* and every float/complex

}  // namespace nxv
