// Complex arithmetic on CT (vec2 or dvec2 holding re, im) over the real type T, included per type
// by nxv_math.glsl. Formulas as the Complex library Nx.BinaryBackend uses.
#if !NXV_SELECT || defined(NXV_USE_nxv_nz)
bool nxv_nz(CT z) { return z.x != K(0.0LF) || z.y != K(0.0LF); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_conj)
CT nxv_conj(CT z) { return CT(z.x, -z.y); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cmul)
CT nxv_cmul(CT a, CT b) { return CT(a.x * b.x - a.y * b.y, a.y * b.x + a.x * b.y); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cdiv)
CT nxv_cdiv(CT a, CT b) {
  T den = b.x * b.x + b.y * b.y;
  return CT((a.x * b.x + a.y * b.y) / den, (a.y * b.x - a.x * b.y) / den);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cabs)
T nxv_cabs(CT z) {
  if (isnan(z.x) && isnan(z.y)) return z.x;
  if (isinf(z.x) || isinf(z.y)) return K(1.0LF) / K(0.0LF);
  T x = abs(z.x), y = abs(z.y);
  if (x == K(0.0LF)) return y;
  if (y == K(0.0LF)) return x;
  if (x > y) return x * nxv_sqrt(K(1.0LF) + (y / x) * (y / x));
  return y * nxv_sqrt(K(1.0LF) + (x / y) * (x / y));
}
#endif

// Complex math, finite inputs, by the Complex library's formulas (its special-value rules for
// infinite and NaN components are not C99's and are not reproduced: see the fixtures' README).
#if !NXV_SELECT || defined(NXV_USE_nxv_cexp)
CT nxv_cexp(CT z) {
  T r = nxv_exp(z.x);
  return CT(r * nxv_cos(z.y), r * nxv_sin(z.y));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_clog)
CT nxv_clog(CT z) { return CT(nxv_log(nxv_cabs(z)), nxv_atan2(z.y, z.x)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_csqrt)
CT nxv_csqrt(CT z) {
  if (z.x == K(0.0LF) && z.y == K(0.0LF)) return z;
  T x = abs(z.x), y = abs(z.y), w;
  if (x >= y) w = nxv_sqrt(x) * nxv_sqrt(K(0.5LF) * (K(1.0LF) + nxv_sqrt(K(1.0LF) + (y / x) * (y / x))));
  else w = nxv_sqrt(y) * nxv_sqrt(K(0.5LF) * (x / y + nxv_sqrt(K(1.0LF) + (x / y) * (x / y))));
  if (z.x >= K(0.0LF)) return CT(w, z.y / (K(2.0LF) * w));
  T i2 = z.y >= K(0.0LF) ? w : -w;
  return CT(z.y / (K(2.0LF) * i2), i2);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_csin)
CT nxv_csin(CT z) { return CT(nxv_sin(z.x) * nxv_cosh(z.y), nxv_cos(z.x) * nxv_sinh(z.y)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_ccos)
CT nxv_ccos(CT z) { return CT(nxv_cos(z.x) * nxv_cosh(z.y), -nxv_sin(z.x) * nxv_sinh(z.y)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_ctan)
CT nxv_ctan(CT z) { return nxv_cdiv(nxv_csin(z), nxv_ccos(z)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_csinh)
CT nxv_csinh(CT z) { return (nxv_cexp(z) - nxv_cexp(-z)) * K(0.5LF); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_ccosh)
CT nxv_ccosh(CT z) { return (nxv_cexp(z) + nxv_cexp(-z)) * K(0.5LF); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_ctanh)
CT nxv_ctanh(CT z) { return nxv_cdiv(nxv_csinh(z), nxv_ccosh(z)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cexpm1)
CT nxv_cexpm1(CT z) { return nxv_cexp(z) - CT(K(1.0LF), K(0.0LF)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_clog1p)
CT nxv_clog1p(CT z) { return nxv_clog(z + CT(K(1.0LF), K(0.0LF))); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_csigmoid)
CT nxv_csigmoid(CT z) { return nxv_cdiv(CT(K(1.0LF), K(0.0LF)), CT(K(1.0LF), K(0.0LF)) + nxv_cexp(-z)); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_crsqrt)
CT nxv_crsqrt(CT z) { return nxv_cdiv(CT(K(1.0LF), K(0.0LF)), nxv_csqrt(z)); }
#endif
// Nx's sign of a complex number: z / |z| (0 for 0).
#if !NXV_SELECT || defined(NXV_USE_nxv_csign)
CT nxv_csign(CT z) {
  T r = nxv_cabs(z);
  return r == K(0.0LF) ? CT(K(0.0LF), K(0.0LF)) : CT(z.x / r, z.y / r);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_casin)
CT nxv_casin(CT z) {  // -i log(i z + sqrt(1 - z^2))
  CT t = nxv_cmul(CT(K(0.0LF), K(1.0LF)), z) + nxv_csqrt(CT(K(1.0LF), K(0.0LF)) - nxv_cmul(z, z));
  return nxv_cmul(CT(K(0.0LF), K(-1.0LF)), nxv_clog(t));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cacos)
CT nxv_cacos(CT z) {  // -i log(z + sqrt(z^2 - 1))
  CT t = z + nxv_csqrt(nxv_cmul(z, z) - CT(K(1.0LF), K(0.0LF)));
  return nxv_cmul(CT(K(0.0LF), K(-1.0LF)), nxv_clog(t));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_catan)
CT nxv_catan(CT z) {  // i/2 (log(1 - i z) - log(1 + i z))
  CT iz = nxv_cmul(CT(K(0.0LF), K(1.0LF)), z);
  CT d = nxv_clog(CT(K(1.0LF), K(0.0LF)) - iz) - nxv_clog(CT(K(1.0LF), K(0.0LF)) + iz);
  return nxv_cmul(CT(K(0.0LF), K(0.5LF)), d);
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_casinh)
CT nxv_casinh(CT z) { return nxv_clog(z + nxv_csqrt(nxv_cmul(z, z) + CT(K(1.0LF), K(0.0LF)))); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cacosh)
CT nxv_cacosh(CT z) { return nxv_clog(z + nxv_csqrt(nxv_cmul(z, z) - CT(K(1.0LF), K(0.0LF)))); }
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_catanh)
CT nxv_catanh(CT z) {  // log((1 + z) / (1 - z)) / 2
  CT q = nxv_cdiv(CT(K(1.0LF), K(0.0LF)) + z, CT(K(1.0LF), K(0.0LF)) - z);
  return nxv_cmul(CT(K(0.5LF), K(0.0LF)), nxv_clog(q));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_ccbrt)
CT nxv_ccbrt(CT z) {  // |z|^(1/3) at phase / 3
  T r = nxv_cbrt(nxv_cabs(z)), t = nxv_atan2(z.y, z.x) / K(3.0LF);
  return CT(r * nxv_cos(t), r * nxv_sin(t));
}
#endif
#if !NXV_SELECT || defined(NXV_USE_nxv_cpow)
CT nxv_cpow(CT x, CT y) {
  if (x.x == K(0.0LF) && x.y == K(0.0LF))
    return (y.x == K(0.0LF) && y.y == K(0.0LF)) ? CT(K(1.0LF), K(0.0LF)) : CT(K(0.0LF), K(0.0LF));
  if (y.x == K(1.0LF) && y.y == K(0.0LF)) return x;
  if (y.x == K(-1.0LF) && y.y == K(0.0LF)) return nxv_cdiv(CT(K(1.0LF), K(0.0LF)), x);
  T rho = nxv_cabs(x), theta = nxv_atan2(x.y, x.x);
  T s = nxv_pow(rho, y.x) * nxv_exp(-y.y * theta);
  T r = y.x * theta + y.y * nxv_log(rho);
  return CT(s * nxv_cos(r), s * nxv_sin(r));
}
#endif
// Complex.atan2 takes complex numbers with zero imaginary parts only (it raises otherwise,
// which a kernel cannot): atan2 of the real parts, and NaN where an imaginary part is not 0.
#if !NXV_SELECT || defined(NXV_USE_nxv_catan2)
CT nxv_catan2(CT y, CT x) {
  if (y.y != K(0.0LF) || x.y != K(0.0LF)) return CT(K(0.0LF) / K(0.0LF), K(0.0LF) / K(0.0LF));
  return CT(nxv_atan2(y.x, x.x), K(0.0LF));
}
#endif
