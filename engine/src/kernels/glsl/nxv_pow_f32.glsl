// pow for float results from float operands (f32, f16, bf16 and f8 loads), included where the
// device has f64. Nx computes pow in f64 and rounds once; the double pow of nxv_real.glsl does
// that with a double-double logarithm, several times the memory time per element on a fast GPU.
// A float result needs far less:
// - the usual case, x > 0 normal and y normal but a small integer, as 2^(y log2 x) in double
//   without division, the high-order terms of both series in float: log2 x to ~2^-44 relative,
//   2^r to ~2^-42, so y log2 x is off by at most ~2^-37 for any result in float range, and the
//   float result is the correctly rounded one unless it lies within ~2^-36 of a midpoint
//   between two floats (none in the tests' 191519 random cases);
// - integer exponents |y| <= 64 by squaring in double: x^2, x^3 and x^4 are rounded once (as
//   Nx's), larger powers within a few double ulps, so exact results stay exact (3^4 = 81) and
//   halfway cases round as Nx's (4097^2 = 2^24 + 2^13 + 1 rounds to even);
// - zeros, infinities, NaN, negative bases and subnormals as C's pow (nxv_pow_special), in a
//   branch of their own: a GPU runs both sides of a per-element choice, and these are rare.
// Measured on an H200, double arithmetic, conversions and integer instructions all cost several
// float ones; this arrangement was the fastest of those tried (bench/RESULTS.md).

// |x|^n for an integer 0 < n <= 64, by squaring.
double nxv_pow_f32_int(double x, int n) {
  double r = 1.0LF;
  for (;;) {
    if ((n & 1) != 0) r *= x;
    n >>= 1;
    if (n == 0) break;
    x *= x;
  }
  return r;
}

// The bits of a positive normal float x (or a subnormal one shifted to normal, e its shift)
// as m 2^e with m in [sqrt(1/2), sqrt(2)).
uint nxv_pow_f32_split(uint b, inout int e) {
  int k = (int(b) - 0x3F3504F3) >> 23;
  e += k;
  return uint(int(b) - (k << 23));
}

// 2^(y log2 x) for x = m 2^e, m in [sqrt(1/2), sqrt(2)) given by its bits bm, and finite y.
// A fast GPU issues double arithmetic at a fraction of its float rate, so the high-order terms
// of both series are float: they are below 2^-20 of the result, where float's rounding stays
// under 2^-44.
double nxv_pow_f32_exp_log(uint bm, int e, double y) {
  // log2 m = 2 atanh(s) / ln2 = s (C1 + C3 s^2 + ... + C15 s^14), Ck = 2 / (k ln2), with
  // s = f / (2 + f) from the float reciprocal and one Newton step in double (error ~2^-44);
  // the next term is below 2^-46. From C9 on in float.
  float ff = uintBitsToFloat(bm) - 1.0;  // exact
  float rf = 1.0 / (2.0 + ff);
  float sf = ff * rf, s2f = sf * sf;
  float w = 0.192359338785195120981 * s2f + 0.221953083213686678055;
  w = w * s2f + 0.262308189252538801338;
  w = w * s2f + 0.320598897975325201636;
  double f = double(ff);
  double r = double(rf);
  double s0 = f * r;
  double s = s0 + s0 * (1.0LF - (2.0LF + f) * r);
  double s2 = s * s;
  double t = s2 * double(w) + 0.412198583111132402103LF;
  t = t * s2 + 0.577078016355585362944LF;
  t = t * s2 + 0.961796693925975604907LF;
  t = t * s2 + 2.88539008177792681472LF;
  // double(e) from the bits of 2^52 + 2^31 + e.
  double de = packDouble2x32(uvec2(uint(e) ^ 0x80000000u, 0x43300000u)) - 4503601774854144.0LF;
  double lx = de + s * t;
  double z = y * lx;
  // |z| >= 256: the float result is 0 or infinite.
  uint zhi = unpackDouble2x32(z).y;
  bool huge = (zhi & 0x7FFFFFFFu) >= 0x40700000u;
  // 2^z = 2^j 2^r, j = round(z) by the 1.5 * 2^52 shift (its low word is j), r = z - j exact.
  double jt = z + 6755399441055744.0LF;
  int j = int(unpackDouble2x32(jt).x);
  double rr = z - (jt - 6755399441055744.0LF);
  // 2^r = sum (r ln2)^n / n! to n = 10 (the next term is below 2^-42); from n = 6 in float.
  float rrf = float(rr);
  float q = 7.05491162080112332988e-9 * rrf + 1.01780860092396997275e-7;
  q = q * rrf + 0.00000132154867901443094884;
  q = q * rrf + 0.00001525273380405984028;
  q = q * rrf + 0.000154035303933816099544;
  double p = rr * double(q) + 0.00133335581464284434234LF;
  p = p * rr + 0.00961812910762847716198LF;
  p = p * rr + 0.0555041086648215799531LF;
  p = p * rr + 0.240226506959100712334LF;
  p = p * rr + 0.693147180559945309417LF;
  p = p * rr + 1.0LF;
  double res = p * packDouble2x32(uvec2(0u, uint(j + 1023) << 20));
  return huge ? (zhi >= 0x80000000u ? 0.0LF : 1.0LF / 0.0LF) : res;
}

// Everything but the usual case: special operands, integer exponents, negative bases and
// subnormal operands.
float nxv_pow_f32_rare(float x, float y) {
  uint bx = floatBitsToUint(x) & 0x7FFFFFFFu, by = floatBitsToUint(y) & 0x7FFFFFFFu;
  float ay = uintBitsToFloat(by);
  bool yint = trunc(y) == y;
  bool yodd = yint && ay < 16777216.0 && (int(ay) & 1) != 0;  // an integer with its units bit set
  bool xneg = floatBitsToUint(x) > 0x7FFFFFFFu;
  // Zero, infinite or NaN operands, or a negative base with a fractional exponent: C's rules
  // (nxv_real.glsl). Told by the bits, so that subnormal operands take the paths below.
  float special;
  if ((bx - 1u >= 0x7F7FFFFFu || by - 1u >= 0x7F7FFFFFu || (xneg && !yint)) &&
      nxv_pow_special(x, y, yint, yodd, special))
    return special;
  double r;
  if (yint && ay <= 64.0) {
    r = nxv_pow_f32_int(double(uintBitsToFloat(bx)), int(ay));
    if (y < 0.0) {  // 1 / r with one Newton correction: drivers' division may be 2.5 ulp off
      double q = 1.0LF / r;
      r = (isinf(r) || r == 0.0LF) ? q : q + q * (1.0LF - r * q);
    }
  } else {
    // Subnormals normalised by a shift (a float multiply may flush them).
    int e = 0;
    if (bx < 0x00800000u) {
      int sh = 23 - findMSB(bx);
      bx <<= sh;
      e = -sh;
    }
    uint bm = nxv_pow_f32_split(bx, e);
    r = nxv_pow_f32_exp_log(bm, e, double(y));
  }
  float rf = float(r);
  return (xneg && yodd) ? -rf : rf;
}

// The usual case, positive normal x and normal y but integers up to 64, in one branch; the
// rest apart.
float nxv_pow_f32(float x, float y) {
  uint bx = floatBitsToUint(x), byf = floatBitsToUint(y), by = byf & 0x7FFFFFFFu;
  if (bx - 0x00800000u >= 0x7F000000u || by - 0x00800000u >= 0x7F000000u || (abs(y) <= 64.0 && trunc(y) == y))
    return nxv_pow_f32_rare(x, y);
  int e = 0;
  uint bm = nxv_pow_f32_split(bx, e);
  return float(nxv_pow_f32_exp_log(bm, e, double(y)));
}
