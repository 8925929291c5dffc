// Nx's sort order as unsigned integer keys (the sort family's kernels). Values are read as their
// raw bits (RAW: uint8_t, uint16_t, uint or uint64_t) and mapped to KEY (uint or uint64_t) so
// that an ascending stable sort of the keys is Nx's stable sort: integers by value, floats with
// -0.0 equal to 0.0 and every NaN equal to every other and above +Inf; descending order is the
// complement (NaN first, -Inf last, ties still in input order).
// Defines: KEY, KEY_BITS (8, 16, 32, 64), KEY_KIND (0 unsigned, 1 signed, 2 float),
// KEY_NAN_ABOVE (float: magnitudes above it are NaN), DESC (0/1).
#ifndef NXV_SORT_KEYS_GLSL
#define NXV_SORT_KEYS_GLSL

#if KEY_BITS == 64
#define KEY_MASK (~uint64_t(0))
#define KEY_SIGN (uint64_t(1) << 63)
#else
#define KEY_MASK (0xFFFFFFFFu >> (32 - KEY_BITS))
#define KEY_SIGN (1u << (KEY_BITS - 1))
#endif

KEY nxv_sort_key(KEY b) {
#if KEY_KIND == 1
  b ^= KEY_SIGN;
#elif KEY_KIND == 2
  KEY mag = b & (KEY_MASK ^ KEY_SIGN);
  if (mag > KEY_NAN_ABOVE) b = KEY_MASK;
  else if (mag == KEY(0)) b = KEY_SIGN;
  else b = (b & KEY_SIGN) != KEY(0) ? (~b & KEY_MASK) : (b | KEY_SIGN);
#endif
#if DESC
  b = ~b & KEY_MASK;
#endif
  return b;
}

uint nxv_sort_digit(KEY b, uint shift) { return uint(nxv_sort_key(b) >> shift) & 255u; }

#endif
