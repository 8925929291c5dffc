// Integer ops on one compute type, included by nxv_int.glsl with I (the type), U (its unsigned
// twin), NXV_IW (bit width: 32 or 64) and NXV_SIGNED (0|1). Nx semantics: wrap-around,
// quotient truncates, remainder takes the dividend's sign, shifts past the width give 0 (or
// -1 for negative values shifted right). Division by zero is undefined in Nx (it raises): 0.
#if NXV_SIGNED
#if !NXV_SELECT || defined(NXV_USE_nxv_uabs)
U nxv_uabs(I a) { return a < I(0) ? U(0) - U(a) : U(a); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_quot)
I nxv_quot(I a, I b) {
  if (b == I(0)) return I(0);
  U q = nxv_uabs(a) / nxv_uabs(b);
  return ((a < I(0)) != (b < I(0))) ? I(U(0) - q) : I(q);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_rem)
I nxv_rem(I a, I b) {
  if (b == I(0)) return I(0);
  U r = nxv_uabs(a) % nxv_uabs(b);
  return a < I(0) ? I(U(0) - r) : I(r);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_iabs)
I nxv_iabs(I a) { return a < I(0) ? I(U(0) - U(a)) : a; }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_isign)
I nxv_isign(I a) { return a > I(0) ? I(1) : (a < I(0) ? I(-1) : I(0)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_shl)
I nxv_shl(I a, I b) { return (b < I(0) || b >= I(NXV_IW)) ? I(0) : (a << b); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_shr)
I nxv_shr(I a, I b) { return (b < I(0) || b >= I(NXV_IW)) ? (a < I(0) ? I(-1) : I(0)) : (a >> b); }
#endif
#else
#if !NXV_SELECT || defined(NXV_USE_nxv_quot)
I nxv_quot(I a, I b) { return b == I(0) ? I(0) : a / b; }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_rem)
I nxv_rem(I a, I b) { return b == I(0) ? I(0) : a % b; }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_iabs)
I nxv_iabs(I a) { return a; }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_isign)
I nxv_isign(I a) { return a > I(0) ? I(1) : I(0); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_shl)
I nxv_shl(I a, I b) { return b >= I(NXV_IW) ? I(0) : (a << b); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_shr)
I nxv_shr(I a, I b) { return b >= I(NXV_IW) ? I(0) : (a >> b); }
#endif
#endif
// Integer.pow(a, b) for b >= 0, wrapping (negative b raises in Nx: 0 here).
#if !NXV_SELECT || defined(NXV_USE_nxv_ipow)
I nxv_ipow(I a, I b) {
#if NXV_SIGNED
  if (b < I(0)) return I(0);
#endif
  I acc = I(1);
  U n = U(b);
  for (int i = 0; i < NXV_IW && n != U(0); ++i) {
    if ((n & U(1)) != U(0)) acc *= a;
    a *= a;
    n >>= U(1);
  }
  return acc;
}
#endif
