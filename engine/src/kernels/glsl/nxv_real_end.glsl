// Ends one instantiation of nxv_real.glsl: its type parameters go out of scope.
#undef T
#undef K
#undef NXV_MANT
#undef NXV_LN2_HI
#undef NXV_LN2_LO
#undef NXV_EXP_MAX
#undef NXV_PIO2_1
#undef NXV_PIO2_2
#undef NXV_PIO2_3
#undef NXV_RED_MAX
#undef NXV_SPLIT
#undef NXV_SQRT_LO
#undef NXV_SQRT_HI
#undef NXV_SQRT_SHIFT
#undef NXV_MIN_NORMAL
