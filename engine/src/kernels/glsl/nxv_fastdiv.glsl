// n / d for n < 2^31 with the multiplier and shift of kernels/fast_division.hpp.
#ifndef NXV_FASTDIV_GLSL
#define NXV_FASTDIV_GLSL
uint nxv_fastdiv(uint n, uint magic, uint shift) {
  uint hi, lo;
  umulExtended(n, magic, hi, lo);
  return (hi + n) >> shift;
}
#endif
