// Float controls, declared where the device supports them (KernelCache adds the NXV_FC_*
// switches per device): keep subnormals (NVIDIA flushes them by default, Nx does not) and
// keep the sign of zero, Inf and NaN through the compiler's optimisations.
#if NXV_FC_DENORM32 || NXV_FC_SZINP32 || (NXV_F64 && (NXV_FC_DENORM64 || NXV_FC_SZINP64))
#extension GL_EXT_spirv_intrinsics : require
#endif
#if NXV_FC_DENORM32
spirv_execution_mode(capabilities = [4464], 4459, 32);  // DenormPreserve
#endif
#if NXV_FC_SZINP32
spirv_execution_mode(capabilities = [4466], 4461, 32);  // SignedZeroInfNanPreserve
#endif
#if NXV_F64 && NXV_FC_DENORM64
spirv_execution_mode(capabilities = [4464], 4459, 64);
#endif
#if NXV_F64 && NXV_FC_SZINP64
spirv_execution_mode(capabilities = [4466], 4461, 64);
#endif
