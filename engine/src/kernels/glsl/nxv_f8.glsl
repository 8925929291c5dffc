// The 8-bit float types as Nx.BinaryBackend reads and writes them (Nx.Floating), in integer
// code so that no driver rounding mode or subnormal flush is involved.
//
// {:f, 8} (E5M2): Nx writes the high byte of the value rounded to f16 (nearest even), so a
// result truncates toward zero from f16; NaN is written as 0x7E. It reads every exponent,
// 0 included, as 2^(e - 15) (1 + m / 4): the codes 0x01-0x03 read as 1.25-1.75 * 2^-15, not
// as the subnormals of the OCP format.
//
// {:f8_e4m3fn, 8}: no infinities; NaN is 0x7F. Nx writes with the mantissa rounded half away
// from zero and capped at 7 (no carry into the exponent), magnitudes from 448 on (infinities
// too) saturated to 448, and below 2^-6 the subnormal m / 8 * 2^-6, m rounded the same way.

#if !NXV_SELECT || defined(NXV_USE_nxv_f8_load)
float nxv_f8_load(uint8_t x) {
  uint b = uint(x);
  uint mag = b & 0x7Fu;
  uint s = (b & 0x80u) << 24;
  if (mag == 0u) return uintBitsToFloat(s);
  if (mag >= 0x7Cu) return uintBitsToFloat(s | (mag == 0x7Cu ? 0x7F800000u : 0x7FC00000u));
  return uintBitsToFloat(s | (((mag >> 2) + 112u) << 23) | ((mag & 3u) << 21));
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_f8_store)
uint8_t nxv_f8_store(float x) { return uint8_t(nxv_f16_bits(x) >> 8); }
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_f8e4m3fn_load)
float nxv_f8e4m3fn_load(uint8_t x) {
  uint b = uint(x);
  uint mag = b & 0x7Fu;
  uint s = (b & 0x80u) << 24;
  if (mag == 0x7Fu) return uintBitsToFloat(0x7FC00000u);
  if (mag < 8u) return uintBitsToFloat(s | floatBitsToUint(float(mag) * 0.001953125));  // m 2^-9
  return uintBitsToFloat(s | (((mag >> 3) + 120u) << 23) | ((mag & 7u) << 20));
}
#endif

#if !NXV_SELECT || defined(NXV_USE_nxv_f8e4m3fn_store)
uint8_t nxv_f8e4m3fn_store(float x) {
  uint u = floatBitsToUint(x);
  uint s = (u >> 24) & 0x80u;
  uint a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint8_t(0x7Fu);
  if (a >= 0x43E00000u) return uint8_t(s | 0x7Eu);  // from 448 on, infinity included
  uint e = a >> 23;
  if (e >= 121u) {                                   // from 2^-6: normal
    uint m = min(((a & 0x7FFFFFu) + 0x80000u) >> 20, 7u);
    return uint8_t(s | ((e - 120u) << 3) | m);
  }
  if (e < 117u) return uint8_t(s);                   // |x| 512 below 1/2 (f32 subnormals too)
  uint mant = (a & 0x7FFFFFu) | 0x800000u;           // |x| 512 = mant 2^(e - 141)
  uint shift = 141u - e;                             // 21..24
  return uint8_t(s | min((mant + (1u << (shift - 1u))) >> shift, 7u));
}
#endif
