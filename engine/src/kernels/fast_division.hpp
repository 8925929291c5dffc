// Division by a run-time divisor in kernels without a divide instruction: for every n < 2^31,
// n / d = (umulHi(n, magic) + n) >> shift (nxv_fastdiv in glsl/nxv_fastdiv.glsl). The host
// computes magic and shift once per divisor and passes them with the launch.
#pragma once
#include <algorithm>
#include <cstdint>

namespace nxv {

inline void fast_division(uint32_t d, uint32_t& magic, uint32_t& shift) {
  d = std::max<uint32_t>(d, 1);
  uint32_t l = 0;
  while ((uint64_t(1) << l) < d) ++l;
  magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << l) - d)) / d + 1);
  shift = l;
}

}  // namespace nxv
