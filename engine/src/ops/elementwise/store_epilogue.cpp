// Store epilogues (store_epilogue.hpp): checking the chain with the elementwise typing and
// rounding rules, generating `nxv_epilogue` (served to the producers' templates as
// nxv_generated.glsl with the chain's functions) and keying the producer's kernel by it.
#include "ops/elementwise/store_epilogue.hpp"

#include <algorithm>
#include <sstream>

#include "device/device_impl.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/elementwise/store_epilogue.h"

namespace nxv {
namespace {

// The chain's inputs: the product, then the extra tensors.
std::vector<DType> chain_inputs(DType product, std::span<const TensorSpec> extras) {
  std::vector<DType> in{product};
  for (const auto& t : extras) in.push_back(t.type);
  return in;
}

// The product held in accumulator `acc` as the chain's input 0 (its register type): rounded
// to the product's type as the producer stores it, through an exclusive or with `zero` so that
// no compiler folds the rounding into the chain's arithmetic (as fusion.cpp keeps intermediates).
std::string kept_product(DType t) {
  switch (t) {
    case DType::F16: return "nxv_f16_value(nxv_f16_bits(float(acc)) ^ zero)";
    case DType::F32: return "uintBitsToFloat(floatBitsToUint(float(acc)) ^ zero)";
    case DType::F64: return "packDouble2x32(unpackDouble2x32(double(acc)) ^ uvec2(zero))";
    case DType::C64: return "uintBitsToFloat(floatBitsToUint(vec2(acc)) ^ uvec2(zero))";
    case DType::C128:
      return "dvec2(packDouble2x32(unpackDouble2x32(dvec2(acc).x) ^ uvec2(zero)), "
             "packDouble2x32(unpackDouble2x32(dvec2(acc).y) ^ uvec2(zero)))";
    default: {  // integers, bf16 and f8: stored as integer bits, which are their register type
      std::string store = glsl_store(t), s = glsl_storage_type(t);
      store.replace(store.find("(v)"), 3, "(acc)");
      return "(" + s + "(" + store + ") ^ " + s + "(zero))";
    }
  }
}

std::string generated_code(const StoreEpilogue& e, const std::string& chain_glsl, const ScalarExpr& s,
                           const EpilogueCode& code) {
  std::ostringstream g;
  for (size_t i = 0; i < e.extra.size(); ++i)
    g << "layout(buffer_reference, std430, buffer_reference_align = " << dtype_size(e.extra[i])
      << ") readonly buffer " << code.name << "_" << i << " { " << glsl_storage_type(e.extra[i]) << " v[]; };\n";
  const std::string params = "  " + code.params_type + " p = " + code.params_expr + ";\n";
  g << chain_glsl << "#undef C\n" << code.comment << "#define NXV_EPILOGUE_RESULT " << s.compute << "\n";
  if (!code.coords.empty()) {
    // nxv_epilogue finds the coordinates and calls nxv_epilogue_at with them.
    std::string parameters, args;
    for (const std::string& name : code.coords) {
      parameters += "uint " + name + ", ";
      args += name + ", ";
    }
    g << s.compute << " nxv_epilogue_at(" << parameters << "ACC acc);\n"
      << s.compute << " nxv_epilogue(uint i, ACC acc) {\n"
      << params << code.index << "  return nxv_epilogue_at(" << args << "acc);\n}\n"
      << s.compute << " nxv_epilogue_at(" << parameters << "ACC acc) {\n";
  } else {
    g << s.compute << " nxv_epilogue(uint i, ACC acc) {\n";
  }
  g << params << "  uint zero = p.zero;\n";
  if (code.coords.empty()) g << code.index;
  g << "  " << glsl_scalar_register_type(e.product) << " in0 = " << kept_product(e.product) << ";\n";
  std::string args = "in0";
  for (size_t i = 0; i < e.extra.size(); ++i) {
    std::string reg = glsl_scalar_register_type(e.extra[i]);
    g << "  " << reg << " in" << i + 1 << " = " << reg << "(" << code.name << "_" << i << "(p.addr[" << i << "]).v["
      << code.at[i] << "]);\n";
    args += ", in" + std::to_string(i + 1);
  }
  g << "  precise " << s.compute << " r = nxv_chain(" << args << ");\n"
    << "  return r;\n}\n";
  return g.str();
}

}  // namespace

std::string fused_chain_error(const CheckArgs& c, const ElementwiseChain& chain, DType out, const std::vector<DType>& in,
                              const std::vector<DType>& kernel_types, const std::string& what, bool& invalid) {
  invalid = true;
  // (The callers bound how many tensors the chain reads.)
  if (std::string why = chain_typing_error(chain, out, in, invalid, in.size()); !why.empty()) return what + ": " + why;
  invalid = false;
  bool has_f64 = c.device.has(kCapFloat64);
  if (!has_f64)
    if (std::string needs = chain_f64_required_error(chain, in); !needs.empty()) return what + ": " + needs;
  FeatureSet features;
  ChainRounding rounding = chain_rounding(chain, kernel_types, has_f64, &features);
  if (rounding.reason != ChainSplit::None) return what + ": " + rounding.message;
  // A step whose kernel fills per-workgroup tables first (pow f32: NXV_KERNEL_INIT) stays in
  // the elementwise kernel, which runs that init.
  for (size_t s = 0; s < chain.steps.size(); ++s) {
    const ChainStep& step = chain.steps[s];
    std::vector<DType> types;
    for (const auto& o : step.operands)
      types.push_back(chain_operand_type(chain, in, o));
    for (const auto& [name, value] : scalar_expr(step.op, step.out, types, has_f64).defines)
      if (name == "NXV_POW_F32")
        return what + ": step " + std::to_string(s) + " (pow) fills per-workgroup tables first";
  }
  features.add_type(out);
  try {
    features.check(*c.device.impl().core, what.c_str());
    glsl_storage_type(out);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string store_epilogue_error(const CheckArgs& c, const ElementwiseChain& chain, DType product,
                                 const std::string& op, bool& invalid, size_t operands,
                                 const std::vector<DType>& more_types) {
  invalid = true;
  if (c.inputs.size() < operands || c.inputs.size() > operands + NXV_EPILOGUE_TENSORS)
    return op + ": with an epilogue it takes " + std::to_string(operands) + " to " +
           std::to_string(operands + NXV_EPILOGUE_TENSORS) + " tensors";
  std::span<const TensorSpec> extras = c.inputs.subspan(operands);
  for (const auto& t : extras)
    if (!broadcastable(t.shape, c.out.shape)) return op + ": an epilogue's tensor cannot be broadcast to the output";
  std::vector<DType> in = chain_inputs(product, extras);
  // The producer's operands are part of the kernel too: an f64 operand brings the f64 float controls.
  std::vector<DType> kernel_types = in;
  for (size_t i = 0; i < operands; ++i) kernel_types.push_back(c.inputs[i].type);
  kernel_types.insert(kernel_types.end(), more_types.begin(), more_types.end());
  if (std::string why = fused_chain_error(c, chain, c.out.type, in, kernel_types, op + " epilogue", invalid);
      !why.empty())
    return why;
  for (const auto& t : extras)
    if (uint64_t(shape_size(c.out.shape)) * dtype_size(t.type) > c.device.impl().core->chunk_bytes())
      return op + ": an epilogue's tensor over one buffer chunk is not read natively yet";
  return "";
}

void generate_store_epilogue(StoreEpilogue& e, const ElementwiseChain& chain, bool has_f64, const EpilogueCode& code) {
  std::vector<DType> in{e.product};
  in.insert(in.end(), e.extra.begin(), e.extra.end());
  std::string chain_glsl;
  ScalarExpr s = chain_scalar_expr(chain, in, has_f64, chain_glsl);
  e.generated = generated_code(e, chain_glsl, s, code);
  e.defines.insert(e.defines.end(), s.defines.begin(), s.defines.end());
  e.features = s.features;
  e.features.add_type(e.product);
  e.features.add_type(e.out);
}

namespace {

// `key` (the producer's kernel) storing through the chain.
KernelKey epilogue_key(KernelKey key, const StoreEpilogueCode& e) {
  const StoreEpilogueCode* epi = &e;
  Defines features;
  e.features.add_defines(features);
  auto& d = key.defines;
  // The output buffer holds the chain's type; STORE_OUT stays the product's rounding.
  for (const char* buffer : {"C", "OUT"}) {
    std::string b = buffer;
    set_define(d, b + "_STORE", glsl_storage_type(epi->out));
    set_define(d, b + "_ALIGN", std::to_string(dtype_size(epi->out)));
  }
  for (const auto& [name, value] : features)
    if (value == "1") set_define(d, name, "1");
  for (const auto& x : epi->defines) set_define(d, x.first, x.second);
  d.emplace_back("EPILOGUE", "1");
  d.emplace_back("STORE_EPILOGUE(v)", glsl_store(epi->out));
  // Code the producer generates itself (a reduction's prologue) comes first: its kernel
  // includes nxv_generated.glsl twice, for its own part, then for the epilogue's.
  if (key.generated.empty()) key.generated = epi->generated;
  else
    key.generated = "#ifndef NXV_GENERATED_FIRST_PART\n#define NXV_GENERATED_FIRST_PART\n" + key.generated +
                    "#else\n" + epi->generated + "#endif\n";
  // The library switches again, now over the generated code too.
  reselect_glsl_uses(d, key.generated);
  return key;
}

}  // namespace

StoreEpilogueCode StoreEpilogue::code() const { return {out, defines, generated, features}; }

KernelKey with_store_epilogue(KernelKey key, const StoreEpilogueCode& code) { return epilogue_key(std::move(key), code); }

void use_epilogue_tensors(LaunchBuilder& builder, Launch& l, const StoreEpilogue* epi) {
  if (!epi) return;
  for (const auto& r : epi->refs) builder.use(l, r.slot, Access::Read);
}

void attach_params(LaunchBuilder& builder, Launch& l, std::vector<std::byte> params, std::vector<AddressPatch> patches,
                   uint32_t push_offset) {
  struct Empty {
    char c;
  };
  builder.params(l, Empty{}, push_offset, std::move(patches));
  l.params = std::move(params);
}

void attach_epilogue(LaunchBuilder& builder, Launch& l, const StoreEpilogue* epi, uint32_t push_offset) {
  if (!epi) return;
  attach_params(builder, l, epi->params, epi->patches, push_offset);
  use_epilogue_tensors(builder, l, epi);
}

}  // namespace nxv
