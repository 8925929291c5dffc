// pow on one float type (C pow's special operands, integer exponents by squaring, others as
// exp(y log x) with y log x carried as a pair), included by nxv_math.glsl right after
// nxv_real.glsl with the same T, K and NXV_* definitions; uses its error-free transformations.

// log(x) = hi + lo for finite x > 0, some 10 bits beyond T: log(m) = 2 atanh(s), s = f / (2 + f)
// carried as a pair, the series tail in T.
#if !NXV_SELECT || defined(NXV_USE_nxv_log_dd)
void nxv_log_dd(T x, out T hi, out T lo) {
  int e;
  T m = nxv_frexp(x, e);
  if (m < K(0.70710678118654752440LF)) {
    m *= K(2.0LF);
    e -= 1;
  }
  T f = m - K(1.0LF);
  precise T dh = K(2.0LF) + f, dl = f - (dh - K(2.0LF));
  T sh = f / dh, p, pe;
  nxv_two_prod(sh, dh, p, pe);
  precise T sl = (((f - p) - pe) - sh * dl) / dh;
  T s2 = sh * sh;
  T t = K(1.0LF) / K(23.0LF);
  t = t * s2 + K(1.0LF) / K(21.0LF);
  t = t * s2 + K(1.0LF) / K(19.0LF);
  t = t * s2 + K(1.0LF) / K(17.0LF);
  t = t * s2 + K(1.0LF) / K(15.0LF);
  t = t * s2 + K(1.0LF) / K(13.0LF);
  t = t * s2 + K(1.0LF) / K(11.0LF);
  t = t * s2 + K(1.0LF) / K(9.0LF);
  t = t * s2 + K(1.0LF) / K(7.0LF);
  t = t * s2 + K(1.0LF) / K(5.0LF);
  t = t * s2 + K(1.0LF) / K(3.0LF);
  T tail = K(2.0LF) * sh * s2 * t;
  T de = T(e), h, he;
  nxv_two_sum(de * NXV_LN2_HI, K(2.0LF) * sh, h, he);
  precise T l = he + (de * NXV_LN2_LO + K(2.0LF) * sl + tail);
  precise T hh = h + l;
  precise T ll = l - (hh - h);
  hi = hh;
  lo = ll;
}
#endif

// C pow's special operands: zeros, infinities, NaN, x = 1 and negative x with a fractional y.
// True with the result in r for those; yint and yodd say whether y is an integer, an odd one.
#if !NXV_SELECT || defined(NXV_USE_nxv_pow_special)
bool nxv_pow_special(T x, T y, bool yint, bool yodd, out T r) {
  r = K(0.0LF);
  if (y == K(0.0LF)) r = K(1.0LF);
  else if (isnan(x) || isnan(y)) r = nxv_nan(x);
  else if (x == K(0.0LF)) {
    bool neg0 = K(1.0LF) / x < K(0.0LF);
    if (y < K(0.0LF)) r = (yodd && neg0) ? K(-1.0LF) / K(0.0LF) : K(1.0LF) / K(0.0LF);
    else r = (yodd && neg0) ? x : K(0.0LF);
  } else if (x == K(1.0LF)) r = K(1.0LF);
  else if (isinf(y)) {
    if (x == K(-1.0LF)) r = K(1.0LF);
    else r = (abs(x) > K(1.0LF)) == (y > K(0.0LF)) ? K(1.0LF) / K(0.0LF) : K(0.0LF);
  } else if (isinf(x)) {
    if (x > K(0.0LF)) r = y > K(0.0LF) ? x : K(0.0LF);
    else {
      T m = y > K(0.0LF) ? K(1.0LF) / K(0.0LF) : K(0.0LF);
      r = yodd ? -m : m;
    }
  } else if (x < K(0.0LF) && !yint) r = nxv_nan(x);
  else return false;
  return true;
}
#endif

// C pow. Integer exponents up to 64 by squaring in pairs (exact results stay exact, e.g.
// 3.0^4 = 81.0); others as exp(y log x) with y log x carried as a pair.
#if !NXV_SELECT || defined(NXV_USE_nxv_pow)
T nxv_pow(T x, T y) {
  bool yint = trunc(y) == y;
  bool yodd = yint && abs(y) < K(9007199254740992.0LF) && nxv_fmod(y, K(2.0LF)) != K(0.0LF);
  T special;
  if (nxv_pow_special(x, y, yint, yodd, special)) return special;
  T ax = abs(x), r = K(0.0LF);
  bool done = false;
  if (yint && abs(y) <= K(64.0LF)) {
    int n = int(abs(y));
    T bh = ax, bl = K(0.0LF), ah = K(1.0LF), al = K(0.0LF);
    while (n > 0) {
      if ((n & 1) != 0) nxv_dd_mul(ah, al, bh, bl, ah, al);
      n >>= 1;
      if (n > 0) nxv_dd_mul(bh, bl, bh, bl, bh, bl);
    }
    if (y > K(0.0LF)) {
      r = ah;
    } else {  // 1 / (ah + al), one Newton correction
      r = K(1.0LF) / ah;
      T p, e;
      nxv_two_prod(ah, r, p, e);
      precise T res = ((K(1.0LF) - p) - e) - al * r;
      r = r + r * res;
    }
    // Near the ends of the range the pairs lose their low part (or the split overflows).
    done = !isnan(r) && !isinf(r) && abs(ah) < NXV_SQRT_HI && abs(ah) > NXV_SQRT_LO;
  }
  if (!done) {
    T lh, ll;
    nxv_log_dd(ax, lh, ll);
    T p = y * lh;
    if (abs(p) > K(2.0LF) * NXV_EXP_MAX) {
      r = nxv_exp(p);  // certain overflow or underflow
    } else {
      T pe;
      nxv_two_prod(y, lh, p, pe);
      precise T zl0 = pe + y * ll;
      precise T zh = p + zl0;
      precise T zl = zl0 - (zh - p);
      T ez = nxv_exp(zh);
      r = isinf(ez) ? ez : ez + ez * zl;  // inf * zl would make NaN when zl < 0
    }
  }
  return (x < K(0.0LF) && yodd) ? -r : r;
}
#endif
