// pow for float results from float operands (f32, f16, bf16 and f8 loads), included where the
// device has f64 (NXV_POW_F32, set by make_key). Nx computes pow in f64 and rounds once; the
// double pow of nxv_real.glsl does that with a double-double logarithm, several times the memory
// time per element on a fast GPU. A float result needs far less:
// - the usual case, x > 0 normal and y finite but not an integer up to 64, as 2^(y log2 x) in
//   double with two small tables in shared memory (glibc's powf arrangement): log2 x = e + log2 c +
//   log2(1 + z), z = m / c - 1 exact, to ~2^-44 relative; 2^z = 2^(j / 64) 2^r to ~2^-44, so
//   y log2 x is off by at most ~2^-37 for any result in float range, and the float result is
//   the correctly rounded one unless it lies within ~2^-36 of a midpoint between two floats
//   (none in the tests' 191519 random cases);
// - integer exponents |y| <= 64 by squaring in double: x^2, x^3 and x^4 are rounded once (as
//   Nx's), larger powers within a few double ulps, so exact results stay exact (3^4 = 81) and
//   halfway cases round as Nx's (4097^2 = 2^24 + 2^13 + 1 rounds to even);
// - zeros, infinities, NaN, negative bases and subnormals as C's pow (nxv_pow_special), in a
//   branch of their own: a GPU runs both sides of a per-element choice, and these are rare. An
//   infinite or NaN y, and results that overflow or vanish (|y log2 x| >= 256), are found
//   after the usual case's arithmetic, by its exponent, and go to that branch too: one test
//   fewer before it (pow f32 4% faster on an H200, bench/RESULTS.md).
// Tables instead of longer series, because on an H200 each double operation or conversion costs
// several float ones (bench/RESULTS.md); in shared memory, because a constant array indexed per
// element becomes per-thread local memory there (half the speed).

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
// as m 2^e, m's bits in [0x3F330000, 0x3FB30000) (m from 0.699 to 1.398).
uint nxv_pow_f32_split(uint b, inout int e) {
  int k = (int(b) - 0x3F330000) >> 23;
  e += k;
  return uint(int(b) - (k << 23));
}

// Logarithm table: for the 16 slices of [0.699, 1.398) (4 bits below the exponent), 1 / c for
// c near the slice's middle rounded to float, so that m / c - 1 is exact in double (c = 1 on the
// slice around 1, keeping log2 x's relative accuracy near 1), and log2 c. Exponential table:
// 2^(i / 64).
shared dvec2 nxv_pow_log_tab[16];
shared double nxv_pow_exp_tab[64];

// Fills the tables, once per workgroup before any element (elementwise.comp's NXV_KERNEL_INIT).
void nxv_pow_f32_tables() {
  if (gl_LocalInvocationIndex == 0u) {
    nxv_pow_log_tab[0] = dvec2(1.3989070653915405LF, -0.48430012207933043LF);
    nxv_pow_log_tab[1] = dvec2(1.3403141498565674LF, -0.4225711867440103LF);
    nxv_pow_log_tab[2] = dvec2(1.286432147026062LF, -0.3633753640047848LF);
    nxv_pow_log_tab[3] = dvec2(1.2367149591445923LF, -0.30651302301826494LF);
    nxv_pow_log_tab[4] = dvec2(1.1906976699829102LF, -0.25180714503608187LF);
    nxv_pow_log_tab[5] = dvec2(1.147982120513916LF, -0.19910017263487428LF);
    nxv_pow_log_tab[6] = dvec2(1.1082251071929932LF, -0.148250957240328LF);
    nxv_pow_log_tab[7] = dvec2(1.0711296796798706LF, -0.09913315506985332LF);
    nxv_pow_log_tab[8] = dvec2(1.0364372730255127LF, -0.05163280469291231LF);
    nxv_pow_log_tab[9] = dvec2(1.0LF, 0.0LF);
    nxv_pow_log_tab[10] = dvec2(0.9481481313705444LF, 0.07681562257950586LF);
    nxv_pow_log_tab[11] = dvec2(0.8951048851013184LF, 0.15987135290176302LF);
    nxv_pow_log_tab[12] = dvec2(0.8476821184158325LF, 0.23840474066869335LF);
    nxv_pow_log_tab[13] = dvec2(0.805031418800354LF, 0.31288300499809124LF);
    nxv_pow_log_tab[14] = dvec2(0.7664670944213867LF, 0.38370423872947484LF);
    nxv_pow_log_tab[15] = dvec2(0.7314285635948181LF, 0.4512111272838952LF);
    nxv_pow_exp_tab[0] = 1.0LF;
    nxv_pow_exp_tab[1] = 1.0108892860517005LF;
    nxv_pow_exp_tab[2] = 1.0218971486541166LF;
    nxv_pow_exp_tab[3] = 1.0330248790212284LF;
    nxv_pow_exp_tab[4] = 1.0442737824274138LF;
    nxv_pow_exp_tab[5] = 1.0556451783605572LF;
    nxv_pow_exp_tab[6] = 1.0671404006768237LF;
    nxv_pow_exp_tab[7] = 1.0787607977571199LF;
    nxv_pow_exp_tab[8] = 1.0905077326652577LF;
    nxv_pow_exp_tab[9] = 1.102382583307841LF;
    nxv_pow_exp_tab[10] = 1.1143867425958924LF;
    nxv_pow_exp_tab[11] = 1.1265216186082418LF;
    nxv_pow_exp_tab[12] = 1.1387886347566916LF;
    nxv_pow_exp_tab[13] = 1.1511892299529827LF;
    nxv_pow_exp_tab[14] = 1.1637248587775775LF;
    nxv_pow_exp_tab[15] = 1.1763969916502812LF;
    nxv_pow_exp_tab[16] = 1.189207115002721LF;
    nxv_pow_exp_tab[17] = 1.202156731452703LF;
    nxv_pow_exp_tab[18] = 1.215247359980469LF;
    nxv_pow_exp_tab[19] = 1.22848053610687LF;
    nxv_pow_exp_tab[20] = 1.241857812073484LF;
    nxv_pow_exp_tab[21] = 1.255380757024691LF;
    nxv_pow_exp_tab[22] = 1.2690509571917332LF;
    nxv_pow_exp_tab[23] = 1.2828700160787783LF;
    nxv_pow_exp_tab[24] = 1.2968395546510096LF;
    nxv_pow_exp_tab[25] = 1.3109612115247644LF;
    nxv_pow_exp_tab[26] = 1.3252366431597413LF;
    nxv_pow_exp_tab[27] = 1.339667524053303LF;
    nxv_pow_exp_tab[28] = 1.3542555469368927LF;
    nxv_pow_exp_tab[29] = 1.3690024229745905LF;
    nxv_pow_exp_tab[30] = 1.383909881963832LF;
    nxv_pow_exp_tab[31] = 1.3989796725383112LF;
    nxv_pow_exp_tab[32] = 1.4142135623730951LF;
    nxv_pow_exp_tab[33] = 1.42961333839197LF;
    nxv_pow_exp_tab[34] = 1.4451808069770467LF;
    nxv_pow_exp_tab[35] = 1.460917794180647LF;
    nxv_pow_exp_tab[36] = 1.4768261459394993LF;
    nxv_pow_exp_tab[37] = 1.4929077282912648LF;
    nxv_pow_exp_tab[38] = 1.5091644275934228LF;
    nxv_pow_exp_tab[39] = 1.5255981507445384LF;
    nxv_pow_exp_tab[40] = 1.5422108254079407LF;
    nxv_pow_exp_tab[41] = 1.559004400237837LF;
    nxv_pow_exp_tab[42] = 1.5759808451078865LF;
    nxv_pow_exp_tab[43] = 1.593142151342267LF;
    nxv_pow_exp_tab[44] = 1.6104903319492543LF;
    nxv_pow_exp_tab[45] = 1.6280274218573478LF;
    nxv_pow_exp_tab[46] = 1.645755478153965LF;
    nxv_pow_exp_tab[47] = 1.6636765803267364LF;
    nxv_pow_exp_tab[48] = 1.681792830507429LF;
    nxv_pow_exp_tab[49] = 1.7001063537185235LF;
    nxv_pow_exp_tab[50] = 1.718619298122478LF;
    nxv_pow_exp_tab[51] = 1.7373338352737062LF;
    nxv_pow_exp_tab[52] = 1.7562521603732995LF;
    nxv_pow_exp_tab[53] = 1.7753764925265212LF;
    nxv_pow_exp_tab[54] = 1.7947090750031072LF;
    nxv_pow_exp_tab[55] = 1.8142521755003989LF;
    nxv_pow_exp_tab[56] = 1.8340080864093424LF;
    nxv_pow_exp_tab[57] = 1.8539791250833855LF;
    nxv_pow_exp_tab[58] = 1.8741676341103LF;
    nxv_pow_exp_tab[59] = 1.8945759815869656LF;
    nxv_pow_exp_tab[60] = 1.9152065613971474LF;
    nxv_pow_exp_tab[61] = 1.9360617934922943LF;
    nxv_pow_exp_tab[62] = 1.9571441241754002LF;
    nxv_pow_exp_tab[63] = 1.978456026387951LF;
  }
  barrier();
}
#define NXV_KERNEL_INIT nxv_pow_f32_tables

// 2^(y log2 x) for x = m 2^e, m in [0.699, 1.398) given by its bits bm. Sets `huge` where
// y log2 x is not finite or |y log2 x| >= 256 (the float result is 0, infinite or NaN), and
// `neg` to its sign; the value returned is then meaningless.
double nxv_pow_f32_exp_log(uint bm, int e, double y, out bool huge, out bool neg) {
  dvec2 tab = nxv_pow_log_tab[(bm - 0x3F330000u) >> 19];
  double zz = fma(double(uintBitsToFloat(bm)), tab.x, -1.0LF);  // exact: 24 by 24 bits
  // log2(1 + z) = z P(z), |z| < 0.0297, P fitted (relative error 2^-44.5).
  double t = zz * 0.20638104173236402LF - 0.24072649159190024LF;
  t = t * zz + 0.28853885352642145LF;
  t = t * zz - 0.36067363845168404LF;
  t = t * zz + 0.4808983469901472LF;
  t = t * zz - 0.7213475204578471LF;
  t = t * zz + 1.4426950408889627LF;
  double de = packDouble2x32(uvec2(uint(e) ^ 0x80000000u, 0x43300000u)) - 4503601774854144.0LF;
  double lx = fma(zz, t, de + tab.y);  // e + log2 c + log2(1 + z)
  double z = y * lx;
  uint zhi = unpackDouble2x32(z).y;
  huge = (zhi & 0x7FFFFFFFu) >= 0x40700000u;
  neg = zhi >= 0x80000000u;
  // 2^z = 2^(j / 64) 2^r, j = round(64 z) by the 1.5 * 2^52 shift, r = z - j / 64 exact,
  // |r| <= 1/128: 2^r - 1 by its series to r^4 (the next term is below 2^-44).
  double jt = fma(z, 64.0LF, 6755399441055744.0LF);
  int j = int(unpackDouble2x32(jt).x);
  double rr = fma(jt - 6755399441055744.0LF, -0.015625LF, z);
  double p = rr * 0.009618129107628477LF + 0.05550410866482158LF;
  p = p * rr + 0.24022650695910072LF;
  p = p * rr + 0.6931471805599453LF;
  p = p * rr;
  uvec2 sb = unpackDouble2x32(nxv_pow_exp_tab[j & 63]);  // times 2^(j >> 6) in its exponent
  double sc = packDouble2x32(uvec2(sb.x, sb.y + uint((j >> 6) << 20)));
  return fma(sc, p, sc);
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
    bool huge, neg;  // y is finite here: |y log2 x| >= 256
    r = nxv_pow_f32_exp_log(bm, e, double(y), huge, neg);
    if (huge) r = neg ? 0.0LF : 1.0LF / 0.0LF;
  }
  float rf = float(r);
  return (xneg && yodd) ? -rf : rf;
}

// The usual case, positive normal x and y not an integer up to 64, in one branch; the rest
// apart.
float nxv_pow_f32(float x, float y) {
  uint bx = floatBitsToUint(x);
  bool rare = bx - 0x00800000u >= 0x7F000000u || (abs(y) <= 64.0 && trunc(y) == y);
  double r = 0.0LF;
  bool huge = false, neg;
  if (!rare) {
    int e = 0;
    uint bm = nxv_pow_f32_split(bx, e);
    r = nxv_pow_f32_exp_log(bm, e, double(y), huge, neg);
  }
  // A subnormal y may take the usual path: x^y rounds to 1 there, as in C's pow.
  if (rare || huge) return nxv_pow_f32_rare(x, y);
  return float(r);
}
