// f16 rounding in integer code: {:f, 8} stores (nxv_f8.glsl) and the f16 intermediates of
// fused chains (ops/elementwise/fusion.cpp), where a float16_t conversion would be dropped:
// compilers fold f32 -> f16 -> f32 back to the f32 value inside one kernel.

// The f16 bits of x rounded to nearest even (overflow to infinity, f16 subnormals kept).
#if !NXV_SELECT || defined(NXV_USE_nxv_f16_bits)
uint nxv_f16_bits(float x) {
  uint u = floatBitsToUint(x);
  uint s = (u >> 16) & 0x8000u;
  uint a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7E00u;           // NaN
  if (a >= 0x477FF000u) return s | 0x7C00u;      // from 65520 on: infinity
  if (a >= 0x38800000u) {                         // normal f16: rebias, round off 13 bits
    uint r = a - 0x38000000u;
    return s | ((r + 0xFFFu + ((r >> 13) & 1u)) >> 13);
  }
  uint e = a >> 23;
  if (e < 102u) return s;                         // below 2^-25: rounds to zero
  uint mant = (a & 0x7FFFFFu) | 0x800000u;        // |x| 2^24 = mant 2^(e - 126)
  uint shift = 126u - e;                          // 14..24
  uint q = mant >> shift;
  uint rest = mant & ((1u << shift) - 1u);
  uint midway = 1u << (shift - 1u);
  if (rest > midway || (rest == midway && (q & 1u) == 1u)) q += 1u;
  return s | q;
}
#endif

// The value of f16 bits h as a float (exact).
#if !NXV_SELECT || defined(NXV_USE_nxv_f16_value)
float nxv_f16_value(uint h) {
  uint s = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return uintBitsToFloat(s | 0x7F800000u | (m << 13));
  if (e != 0u) return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
  return uintBitsToFloat(s | floatBitsToUint(float(m) * 5.9604644775390625e-8));  // m 2^-24
}
#endif
