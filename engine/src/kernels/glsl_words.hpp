// The unsigned GLSL word that moves an element of `bytes` bytes bit for bit (copies, gathers,
// transposes): uint8_t, uint16_t, uint, uvec2 or uvec4.
#pragma once
#include <cstddef>

namespace nxv {

inline const char* glsl_word_type(size_t bytes) {
  switch (bytes) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint";
    case 8: return "uvec2";
    default: return "uvec4";
  }
}

}  // namespace nxv
