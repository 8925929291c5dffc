// Dot operand prologues (dot_prologue.hpp): checking with the fused-chain rules and the tiers
// that apply them, generating nxv_prologue_<role> (served to gemm.comp and matvec.comp as the
// first part of nxv_generated.glsl) and keying the kernels by it.
#include "ops/dot/dot_prologue.hpp"

#include <sstream>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_plan.hpp"

namespace nxv {
namespace {

const std::string* define_value(const Defines& d, const std::string& name) {
  for (const auto& [n, v] : d)
    if (n == name) return &v;
  return nullptr;
}

// Whether `chain` over `in` computes in f64 somewhere (its kernel then declares the f64 float
// controls).
bool uses_f64(const ElementwiseChain& chain, const std::vector<DType>& in, bool has_f64) {
  FeatureSet f;
  chain_rounding(chain, in, has_f64, &f);
  return f.uses_f64();
}

}  // namespace

std::vector<DType> dot_prologue_types(const DotAttrs& a, const std::vector<DType>& operand_types, bool has_f64) {
  std::vector<DType> types;
  for (size_t i = 0; i < 2; ++i) {
    if (!a.prologue[i]) continue;
    for (const ChainStep& s : a.prologue[i]->steps) types.push_back(s.out);
    if (uses_f64(*a.prologue[i], {operand_types.at(i)}, has_f64)) types.push_back(DType::F64);
  }
  return types;
}

std::string dot_prologue_error(const CheckArgs& c, const DotAttrs& a, bool& invalid) {
  invalid = false;
  const DeviceCore& core = *c.device.impl().core;
  DType product = a.epilogue ? a.product : c.out.type;
  for (size_t i = 0; i < 2; ++i) {
    if (!a.prologue[i]) continue;
    const ElementwiseChain& chain = *a.prologue[i];
    const DType t = c.inputs[i].type;
    if (chain.steps.empty() || chain.steps.back().out != t) {
      invalid = true;
      return "dot: an operand's prologue gives a value of the operand's own type";
    }
    // The tiers that apply prologues: the SIMT tile and the matrix-vector kernel, which GPUs
    // take for f32 and f64 products of operands of the product's type.
    if ((product != DType::F32 && product != DType::F64) || c.inputs[0].type != product || c.inputs[1].type != product)
      return "dot: operand prologues run in f32 and f64 products of operands of the product's type";
    if (gemm_cpu_paths(core) || tuning().dot.bf16x3)
      return "dot: operand prologues run on the GPUs' tiers only";
    // The kernel's other code: the operands, the product, both prologues and the epilogue.
    const bool has_f64 = c.device.has(kCapFloat64);
    std::vector<DType> kernel_types{c.inputs[0].type, c.inputs[1].type, product};
    std::vector<DType> prologues = dot_prologue_types(a, {c.inputs[0].type, c.inputs[1].type}, has_f64);
    kernel_types.insert(kernel_types.end(), prologues.begin(), prologues.end());
    if (a.epilogue) {
      std::vector<DType> epilogue_in{product};
      for (size_t j = 2; j < c.inputs.size(); ++j) epilogue_in.push_back(c.inputs[j].type);
      for (const ChainStep& s : a.epilogue->steps) kernel_types.push_back(s.out);
      if (uses_f64(*a.epilogue, epilogue_in, has_f64)) kernel_types.push_back(DType::F64);
    }
    if (std::string why = fused_chain_error(c, chain, t, {t}, kernel_types, "dot prologue", invalid); !why.empty())
      return why;
  }
  const TensorSpec& l = c.inputs[0];
  const TensorSpec& r = c.inputs[1];
  if (host_gemm_candidate(c.device, product, gemm_shape(l.shape, r.shape, a), l.type, r.type))
    return "dot: this product runs on the host BLAS, which takes no prologue";
  return "";
}

std::optional<DotPrologueCode> dot_prologue_code(const GemmOperand& first, const GemmOperand& second,
                                                 std::array<const char*, 2> roles, bool has_f64) {
  if (!first.prologue && !second.prologue) return std::nullopt;
  DotPrologueCode code;
  std::ostringstream g;
  const GemmOperand* operands[2] = {&first, &second};
  for (size_t i = 0; i < 2; ++i) {
    code.roles[i] = roles[i];
    const GemmOperand& o = *operands[i];
    if (!o.prologue) continue;
    code.on[i] = true;
    code.types[i] = o.type;
    const std::string fn = "nxv_prologue_" + std::string(roles[i]);
    std::string chain_glsl;
    ScalarExpr s = chain_scalar_expr(*o.prologue, {o.type}, has_f64, chain_glsl, fn + "_chain");
    const std::string stored = glsl_storage_type(o.type), reg = glsl_scalar_register_type(o.type);
    std::string store = glsl_store(o.type);
    store.replace(store.find("(v)"), 3, "(r)");
    g << chain_glsl << "#undef C\n"
      << "// operand " << roles[i] << "'s prologue (ops/dot/dot_prologue.cpp): the chain's result rounded to the\n"
      << "// operand's type, as its own kernel stores it\n"
      << stored << " " << fn << "(" << stored << " x) {\n"
      << "  " << reg << " in0 = " << reg << "(x);\n"
      << "  precise " << s.compute << " r = " << fn << "_chain(in0);\n"
      << "  return " << store << ";\n}\n";
    if (std::string v4 = glsl_vec4_type(o.type); !v4.empty())
      g << v4 << " " << fn << "4(" << v4 << " q) {\n"
        << "  return " << v4 << "(" << fn << "(q.x), " << fn << "(q.y), " << fn << "(q.z), " << fn << "(q.w));\n}\n";
    code.defines.insert(code.defines.end(), s.defines.begin(), s.defines.end());
    code.features.merge(s.features);
    code.features.add_type(o.type);
  }
  code.generated = g.str();
  return code;
}

KernelKey with_dot_prologue(KernelKey key, const DotPrologueCode& code) {
  auto& d = key.defines;
  Defines features;
  code.features.add_defines(features);
  for (const auto& [name, value] : features)
    if (value == "1") set_define(d, name, "1");
  for (const auto& x : code.defines) set_define(d, x.first, x.second);
  for (size_t i = 0; i < 2; ++i) {
    if (!code.on[i]) continue;
    const std::string r = code.roles[i], fn = "nxv_prologue_" + r;
    // LOAD_<r>(x) and LOAD_<r>4(q) read through the prologue: the kernel's conversion of the
    // prologue's stored value.
    const std::pair<std::string, std::string> loads[] = {
        {"LOAD_" + r + "(x)", "LOAD_" + r + "_PLAIN(" + fn + "(x))"},
        {"LOAD_" + r + "4(q)", "LOAD_" + r + "4_PLAIN(" + fn + "4(q))"}};
    for (const auto& [load, through] : loads) {
      const std::string* found = define_value(d, load);
      if (!found) continue;
      std::string plain = *found, name = load;
      name.insert(name.find('('), "_PLAIN");
      d.emplace_back(name, plain);
      set_define(d, load, through);
    }
  }
  d.emplace_back("DOT_PROLOGUE", "1");
  key.generated = code.generated;
  // The library switches again, now over the generated code too.
  reselect_glsl_uses(d, key.generated);
  return key;
}

}  // namespace nxv
