// nxv_clip for one integer type I (included by nxv_math.glsl).
#if !NXV_SELECT || defined(NXV_USE_nxv_clip)
I nxv_clip(I x, I lo, I hi) {
  I m = x > lo ? x : lo;
  return m < hi ? m : hi;
}
#endif
