// Complex arithmetic on CT (vec2 or dvec2 holding re, im) over the real type T, included per type
// by nxv_math.glsl. Formulas as the Complex library Nx.BinaryBackend uses.
bool nxv_nz(CT z) { return z.x != K(0.0LF) || z.y != K(0.0LF); }
CT nxv_conj(CT z) { return CT(z.x, -z.y); }
CT nxv_cmul(CT a, CT b) { return CT(a.x * b.x - a.y * b.y, a.y * b.x + a.x * b.y); }
CT nxv_cdiv(CT a, CT b) {
  T den = b.x * b.x + b.y * b.y;
  return CT((a.x * b.x + a.y * b.y) / den, (a.y * b.x - a.x * b.y) / den);
}
T nxv_cabs(CT z) {
  if (isnan(z.x) && isnan(z.y)) return z.x;
  if (isinf(z.x) || isinf(z.y)) return K(1.0LF) / K(0.0LF);
  T x = abs(z.x), y = abs(z.y);
  if (x == K(0.0LF)) return y;
  if (y == K(0.0LF)) return x;
  if (x > y) return x * nxv_sqrt(K(1.0LF) + (y / x) * (y / x));
  return y * nxv_sqrt(K(1.0LF) + (x / y) * (x / y));
}
