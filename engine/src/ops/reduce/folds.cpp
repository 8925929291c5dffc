#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

std::string extreme_identity(AccType acc, bool max) {
  switch (acc) {
    case AccType::F32: return max ? "uintBitsToFloat(0xFF800000u)" : "uintBitsToFloat(0x7F800000u)";
    case AccType::F64: return max ? "packDouble2x32(uvec2(0u, 0xFFF00000u))" : "packDouble2x32(uvec2(0u, 0x7FF00000u))";
    case AccType::S32: return max ? "int(0x80000000u)" : "int(0x7FFFFFFFu)";
    case AccType::U32: return max ? "0u" : "0xFFFFFFFFu";
    // Without 64-bit literals (glslang takes them only with GL_ARB_gpu_shader_int64).
    case AccType::S64: return max ? "(int64_t(1) << 63)" : "(~(int64_t(1) << 63))";
    default: return max ? "uint64_t(0)" : "(~uint64_t(0))";
  }
}

}  // namespace

AccType fold_acc_type(FoldKind kind, DType out, DType in) {
  if (kind == FoldKind::All || kind == FoldKind::Any) return AccType::U32;
  return acc_of(kind == FoldKind::Max || kind == FoldKind::Min ? in : out);
}

Fold fold_for(FoldKind kind, AccType acc) {
  const bool complex = is_complex(acc), floating = is_floating(acc);
  const std::string name = glsl_name(acc);
  switch (kind) {
    case FoldKind::Sum: return {acc, name + "(0)", "((a) + (b))"};
    case FoldKind::Product:
      return {acc, complex ? name + "(1, 0)" : name + "(1)", complex ? "nxv_cmul(a, b)" : "((a) * (b))"};
    case FoldKind::Max: return {acc, extreme_identity(acc, true), floating ? "NXV_FMAX(a, b)" : "NXV_IMAX(a, b)"};
    case FoldKind::Min: return {acc, extreme_identity(acc, false), floating ? "NXV_FMIN(a, b)" : "NXV_IMIN(a, b)"};
    case FoldKind::All: return {acc, "1u", "((a) & (b))"};
    case FoldKind::Any: return {acc, "0u", "((a) | (b))"};
  }
  return {};
}

void add_acc_features(FeatureSet& features, AccType acc) {
  if (needs_f64(acc)) features.need_f64();
  if (is_int64(acc)) features.need_int64();
}

FeatureSet fold_features(std::initializer_list<DType> types, AccType acc) {
  FeatureSet features;
  for (DType t : types) features.add_type(t);
  add_acc_features(features, acc);
  return features;
}

void add_buffer_defines(Defines& d, const std::string& name, DType t) {
  d.emplace_back(name + "_STORE", glsl_storage_type(t));
  d.emplace_back(name + "_ALIGN", std::to_string(dtype_size(t)));
}

std::string shuffle_xor(AccType acc) {
  if (is_int64(acc)) return glsl_name(acc) + "(packUint2x32(subgroupShuffleXor(unpackUint2x32(uint64_t(v)), m)))";
  return "subgroupShuffleXor(v, m)";
}

}  // namespace nxv
