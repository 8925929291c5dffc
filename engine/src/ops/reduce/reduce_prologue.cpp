// Reduction prologues (reduce_prologue.hpp): checking with the fused-chain rules, each tensor's
// strides over the first pass's rows, and nxv_prologue (served to reduce.comp as
// nxv_generated.glsl with the chain's functions).
#include "ops/reduce/reduce_prologue.hpp"

#include <cstring>
#include <sstream>

#include "device/device_impl.hpp"
#include "kernels/glsl_types.hpp"
#include "memory/copy.hpp"
#include "ops/elementwise/elementwise.hpp"
#include "ops/elementwise/store_epilogue.hpp"
#include "ops/reduce/reduce_prologue.h"

namespace nxv {
namespace {

constexpr const char* kNames[] = {"a", "b", "c"};

// The chain's result rounded to `out`. f16 rounds in integer code (as fused chains do): a
// float16_t conversion read straight back as float may be folded away (NVIDIA's compiler does).
std::string prologue_store(DType out) {
  return out == DType::F16 ? "float16_t(nxv_f16_value(nxv_f16_bits(float(v))))" : glsl_store(out);
}

std::string generated_code(const std::vector<DType>& in, DType out, const std::string& chain_glsl,
                           const ScalarExpr& s) {
  std::ostringstream g;
  for (size_t j = 0; j < in.size(); ++j)
    g << "layout(buffer_reference, std430, buffer_reference_align = " << dtype_size(in[j])
      << ") readonly buffer ReducePrologue_" << kNames[j] << " { " << glsl_storage_type(in[j]) << " v[]; };\n";
  g << chain_glsl << "#undef C\n"
    << "// the reduction's prologue (ops/reduce/reduce_prologue.cpp): element k of row (o, i), the\n"
    << "// chain's result converted to its stored type as its own kernel stores it\n"
    << "#define NXV_PROLOGUE_STORE(v) " << prologue_store(out) << "\n"
    << glsl_storage_type(out) << " nxv_prologue(uint o, uint i, uint k) {\n"
    << "  ReducePrologueParams p = NXV_PROLOGUE_PARAMS;\n";
  std::string args;
  for (size_t j = 0; j < in.size(); ++j) {
    std::string n = kNames[j], reg = glsl_scalar_register_type(in[j]);
    g << "  " << reg << " in" << j << " = " << reg << "(ReducePrologue_" << n << "(p." << n << "_addr).v[o * p.so_" << n
      << " + k * p.sr_" << n << " + i * p.si_" << n << "]);\n";
    args += (j ? ", in" : "in") + std::to_string(j);
  }
  g << "  precise " << s.compute << " r = nxv_prologue_chain(" << args << ");\n"
    << "  return NXV_PROLOGUE_STORE(r);\n}\n";
  return g.str();
}

}  // namespace

std::string reduce_prologue_error(const CheckArgs& c, const ReduceAttrs& a, const std::vector<bool>& reduced,
                                  const std::vector<DType>& kernel_types, bool& invalid) {
  invalid = true;
  std::string op(op_info(c.op).name);
  const ElementwiseChain& chain = *a.prologue;
  if (a.prologue_inputs < 1 || a.prologue_inputs > 3 || c.inputs.size() < a.prologue_inputs)
    return op + ": a prologue reads one to three of the op's tensors";
  if (chain.steps.empty()) return op + ": a prologue has steps";
  std::vector<DType> in;
  for (uint32_t j = 0; j < a.prologue_inputs; ++j) {
    if (!broadcastable(c.inputs[j].shape, a.prologue_shape))
      return op + ": a prologue's tensor cannot be broadcast to the reduced tensor";
    in.push_back(c.inputs[j].type);
  }
  DType out = chain.steps.back().out;
  std::vector<DType> types = kernel_types;
  types.insert(types.end(), in.begin(), in.end());
  if (std::string why = fused_chain_error(c, chain, out, in, types, op + " prologue", invalid); !why.empty())
    return why;
  invalid = false;
  Tensor rows;
  rows.type = out, rows.shape = a.prologue_shape, rows.strides = row_major_strides(a.prologue_shape);
  if (shape_size(a.prologue_shape) > 0 && !reduce_geometry(rows, reduced))
    return op + ": a prologue needs the reduced axes together (kept, reduced, kept)";
  for (uint32_t j = 0; j < a.prologue_inputs; ++j)
    if (uint64_t(shape_size(a.prologue_shape)) * dtype_size(c.inputs[j].type) > c.device.impl().core->chunk_bytes())
      return op + ": a prologue's tensor over one buffer chunk is not read natively yet";
  return "";
}

ReducePrologue make_reduce_prologue(const LowerArgs& a, const ReduceAttrs& at, const std::vector<bool>& reduced) {
  ReducePrologue pro;
  const ElementwiseChain& chain = *at.prologue;
  pro.type = chain.steps.back().out;
  ReducePrologueParams p{};
  uint32_t* strides[3][3] = {{&p.so_a, &p.sr_a, &p.si_a}, {&p.so_b, &p.sr_b, &p.si_b}, {&p.so_c, &p.sr_c, &p.si_c}};
  size_t addr[3] = {offsetof(ReducePrologueParams, a_addr), offsetof(ReducePrologueParams, b_addr),
                    offsetof(ReducePrologueParams, c_addr)};
  std::vector<DType> in;
  for (uint32_t j = 0; j < at.prologue_inputs; ++j) {
    const LowerInput& input = a.inputs[j];
    const Tensor& t = input.tensor;
    in.push_back(t.type);
    Tensor view = broadcast_view(t, at.prologue_shape);
    if (view.size() == 0) continue;  // no row holds an element: never read
    BufferRef ref{input.slot, uint64_t(view.offset) * dtype_size(t.type)};
    std::optional<ReduceGeometry> g = reduce_geometry(view, reduced);
    auto last_index = [](const ReduceGeometry& r) {
      return (r.outer - 1) * r.outer_stride + (r.reduced - 1) * r.reduced_stride + (r.inner - 1) * r.inner_stride;
    };
    // Rows of another grouping than the logical tensor's (a broadcast or transposed axis
    // inside a group) or indices over 32 bits: a row-major copy, whose rows are the tensor's.
    if (!g || last_index(*g) >= (uint64_t(1) << 32)) {
      Tensor copy = empty(a.device, t.type, view.shape);
      uint32_t slot = a.builder.bind(copy.buffer);
      append_copy(a.device, a.builder, view, input.slot, copy, slot);
      g = reduce_geometry(copy, reduced);
      ref = {slot, 0};
    }
    if (g) *strides[j][0] = uint32_t(g->outer_stride), *strides[j][1] = uint32_t(g->reduced_stride),
           *strides[j][2] = uint32_t(g->inner_stride);
    pro.patches.push_back({uint32_t(addr[j]), ref});
    pro.slots.push_back(ref.slot);
  }
  pro.params.resize(sizeof p);
  std::memcpy(pro.params.data(), &p, sizeof p);
  std::string chain_glsl;
  // Its own names: a final pass may also hold an epilogue's chain (nxv_chain).
  ScalarExpr s = chain_scalar_expr(chain, in, a.device.has(kCapFloat64), chain_glsl, "nxv_prologue_chain");
  pro.generated = generated_code(in, pro.type, chain_glsl, s);
  pro.defines = s.defines;
  pro.features = s.features;
  for (DType t : in) pro.features.add_type(t);
  pro.features.add_type(pro.type);
  return pro;
}

}  // namespace nxv
