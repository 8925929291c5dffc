// Integer helpers for every integer compute type (overloads), plus bit counts on the storage
// width of the input (NXV_BITS_A: 8, 16, 32, 64).
#define I int
#define U uint
#define NXV_IW 32
#define NXV_SIGNED 1
#include "nxv_int_ops.glsl"
#undef I
#undef U
#undef NXV_SIGNED
#define I uint
#define U uint
#define NXV_SIGNED 0
#include "nxv_int_ops.glsl"
#undef I
#undef U
#undef NXV_SIGNED
#undef NXV_IW
#if NXV_INT64
#define NXV_IW 64
#define I int64_t
#define U uint64_t
#define NXV_SIGNED 1
#include "nxv_int_ops.glsl"
#undef I
#undef U
#undef NXV_SIGNED
#define I uint64_t
#define U uint64_t
#define NXV_SIGNED 0
#include "nxv_int_ops.glsl"
#undef I
#undef U
#undef NXV_SIGNED
#undef NXV_IW
#endif

// Leading zeros / set bits of the low `bits` bits (the input's storage width).
#if !NXV_SELECT || defined(NXV_USE_nxv_clz32)
uint nxv_clz32(uint v, int bits) {
  if (bits < 32) v &= (1u << uint(bits)) - 1u;
  return v == 0u ? uint(bits) : uint(bits - 1 - findMSB(v));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_popc32)
uint nxv_popc32(uint v, int bits) {
  if (bits < 32) v &= (1u << uint(bits)) - 1u;
  return uint(bitCount(v));
}
#endif
#if NXV_INT64
#if !NXV_SELECT || defined(NXV_USE_nxv_clz64)
uint nxv_clz64(uint64_t v) {
  uint hi = uint(v >> 32), lo = uint(v);
  return hi != 0u ? uint(31 - findMSB(hi)) : (lo != 0u ? uint(63 - findMSB(lo)) : 64u);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_popc64)
uint nxv_popc64(uint64_t v) { return uint(bitCount(uint(v >> 32)) + bitCount(uint(v))); }
#endif
#endif
