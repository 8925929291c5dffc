// A kernel variant as a typed value, one struct per template: its fields say which compiled
// kernel an op needs, and they are both the kernel cache's key and the only input of the
// kernel's source (macro definitions, generated code, workgroup shape). `source()` takes no
// device: whatever it depends on is a field, so two launches with equal fields share a kernel
// and two with different sources never do.
//
//   struct ScanVariant {
//     static constexpr const char* kTemplate = "scan";      // scan.comp
//     OpId op; DType out, in; bool columns;
//     auto fields() const { return std::tie(op, out, in, columns); }
//     KernelKey source() const;                             // from the fields alone
//     static std::vector<ScanVariant> declared(const DeviceInfo&);  // every variant it can be
//   };
//
// Fields may be arithmetic or enum values, strings, pairs, arrays, vectors and optionals of
// them, and structs with fields() of their own (generated code is a string field: it is part
// of what selects the kernel).
#pragma once
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nxv/device.hpp"

namespace nxv {

// The source of a kernel: a template and its macro definitions, plus the specialization
// constants every template may declare: workgroup shape (constant_id 0, 1, 2 for
// local_size_{x,y,z}_id) and shared-memory bytes (constant_id 3).
struct KernelKey {
  std::string name;  // template file name without extension, e.g. "elementwise"
  std::vector<std::pair<std::string, std::string>> defines{};
  uint32_t workgroup_size = 256;  // x
  uint32_t workgroup_y = 1, workgroup_z = 1;
  uint32_t shared_bytes = 0;
  // Subgroup size the pipeline must run with (0: the driver's choice). Needs the device's
  // subgroup size control; requested with full subgroups.
  uint32_t required_subgroup_size = 0;
  // Most workgroups one dispatch of a grid-stride kernel should launch (0: the device's
  // limit). A launch setting, not compiled in, but kept with the kernel that asks for it.
  uint32_t max_workgroups = 0;
  // Generated GLSL (a fused chain's functions), served to the template as the include
  // "nxv_generated.glsl".
  std::string generated{};
};

template <typename V>
concept KernelVariant = requires(const V& v) {
  { V::kTemplate } -> std::convertible_to<const char*>;
  v.fields();
  { v.source() } -> std::same_as<KernelKey>;
};

namespace variant_detail {

template <typename T>
concept HasFields = requires(const T& t) { t.fields(); };

template <typename T>
void put(std::string& out, const T& field);

template <typename Tuple>
void put_tuple(std::string& out, const Tuple& t) {
  std::apply([&](const auto&... f) { (put(out, f), ...); }, t);
}

template <typename T>
void put(std::string& out, const T& field) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_arithmetic_v<U> || std::is_enum_v<U>) {
    out.append(reinterpret_cast<const char*>(&field), sizeof field);
  } else if constexpr (std::is_same_v<U, std::string>) {
    uint32_t n = uint32_t(field.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += field;
  } else if constexpr (requires { field.has_value(); *field; }) {  // std::optional
    put(out, field.has_value());
    if (field) put(out, *field);
  } else if constexpr (HasFields<U>) {
    put_tuple(out, field.fields());
  } else {
    // arrays, vectors and tuples of fields; a length first where it can vary
    if constexpr (requires { field.size(); field.begin(); }) {
      uint32_t n = uint32_t(field.size());
      out.append(reinterpret_cast<const char*>(&n), sizeof n);
      for (const auto& e : field) put(out, e);
    } else {
      put_tuple(out, field);
    }
  }
}

}  // namespace variant_detail

// A producer's variant with generated code added to its source by `apply` (a fused chain's
// store epilogue, a product's operand prologues): keyed by both.
template <KernelVariant V, typename Code, KernelKey (*apply)(KernelKey, const Code&)>
struct WithGeneratedCode {
  static constexpr const char* kTemplate = V::kTemplate;
  V producer;
  Code code;
  auto fields() const { return std::tie(producer, code); }
  KernelKey source() const { return apply(producer.source(), code); }
};

// The cache's key of a variant: its template's name and the bytes of its fields.
template <KernelVariant V>
std::string variant_key(const V& v) {
  std::string key = V::kTemplate;
  key += '\0';
  variant_detail::put_tuple(key, v.fields());
  return key;
}

// The variant's source, checked to be of its own template.
KernelKey checked_source(const char* template_name, KernelKey key);

template <KernelVariant V>
KernelKey variant_source(const V& v) {
  return checked_source(V::kTemplate, v.source());
}

// A variant of some template, type-erased, as the declared-variants test sees it.
struct DeclaredVariant {
  std::string template_name;
  std::string key;
  std::function<KernelKey()> source;
};

// Every variant a template declares (V::declared(info)) into `out`.
template <KernelVariant V>
void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  for (const V& v : V::declared(info))
    out.push_back({V::kTemplate, variant_key(v), [v] { return variant_source(v); }});
}

}  // namespace nxv
