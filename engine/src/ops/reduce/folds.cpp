#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

std::string extreme_identity(const std::string& acc, bool max) {
  if (acc == "float") return max ? "uintBitsToFloat(0xFF800000u)" : "uintBitsToFloat(0x7F800000u)";
  if (acc == "double") return max ? "packDouble2x32(uvec2(0u, 0xFFF00000u))" : "packDouble2x32(uvec2(0u, 0x7FF00000u))";
  if (acc == "int") return max ? "int(0x80000000u)" : "int(0x7FFFFFFFu)";
  if (acc == "uint") return max ? "0u" : "0xFFFFFFFFu";
  // Without 64-bit literals (glslang takes them only with GL_ARB_gpu_shader_int64).
  if (acc == "int64_t") return max ? "(int64_t(1) << 63)" : "(~(int64_t(1) << 63))";
  return max ? "uint64_t(0)" : "(~uint64_t(0))";
}

}  // namespace

std::string fold_acc_type(FoldKind kind, DType out, DType in) {
  if (kind == FoldKind::All || kind == FoldKind::Any) return "uint";
  return glsl_compute_type(kind == FoldKind::Max || kind == FoldKind::Min ? in : out);
}

Fold fold_for(FoldKind kind, const std::string& acc) {
  bool complex = acc == "vec2" || acc == "dvec2";
  bool floating = acc == "float" || acc == "double";
  switch (kind) {
    case FoldKind::Sum: return {acc, acc + "(0)", "((a) + (b))"};
    case FoldKind::Product:
      return {acc, complex ? acc + "(1, 0)" : acc + "(1)", complex ? "nxv_cmul(a, b)" : "((a) * (b))"};
    case FoldKind::Max: return {acc, extreme_identity(acc, true), floating ? "NXV_FMAX(a, b)" : "NXV_IMAX(a, b)"};
    case FoldKind::Min: return {acc, extreme_identity(acc, false), floating ? "NXV_FMIN(a, b)" : "NXV_IMIN(a, b)"};
    case FoldKind::All: return {acc, "1u", "((a) & (b))"};
    case FoldKind::Any: return {acc, "0u", "((a) | (b))"};
  }
  return {};
}

uint32_t glsl_type_bytes(const std::string& t) {
  if (t == "double" || t == "vec2" || t == "uint64_t" || t == "int64_t") return 8;
  if (t == "dvec2") return 16;
  return 4;
}

void add_acc_features(FeatureSet& features, const std::string& acc) {
  if (acc == "double" || acc == "dvec2") features.need_f64();
  if (acc == "int64_t" || acc == "uint64_t") features.need_int64();
}

FeatureSet fold_features(std::initializer_list<DType> types, const std::string& acc) {
  FeatureSet features;
  for (DType t : types) features.add_type(t);
  add_acc_features(features, acc);
  return features;
}

void add_buffer_defines(Defines& d, const std::string& name, DType t) {
  d.emplace_back(name + "_STORE", glsl_storage_type(t));
  d.emplace_back(name + "_ALIGN", std::to_string(dtype_size(t)));
}

}  // namespace nxv
