// Dot epilogues: the extra tensors read through collapsed strides over [batch, m, n]; checking
// and code generation are store_epilogue.cpp's (served to the dot templates as
// nxv_generated.glsl, dot_epilogue.glsl).
#include "ops/dot/dot_epilogue.hpp"

#include <array>
#include <cstring>
#include <numeric>

#include "device/device_impl.hpp"
#include "memory/copy.hpp"
#include "ops/dot/dot_epilogue.h"
#include "ops/dot/dot_plan.hpp"
#include "ops/dot/dot_prologue.hpp"

namespace nxv {
namespace {

constexpr int64_t kMaxIndex = int64_t(1) << 31;

// nxv_epilogue's coordinates: output element i is row-major [batch, m, n]; the kernels that
// know an element's coordinates (the tile and matrix-vector kernels) call nxv_epilogue_at.
EpilogueCode dot_code() {
  EpilogueCode c;
  c.name = "DotEpilogue";
  c.comment = "// the dot's epilogue (ops/dot/dot_epilogue.cpp): output element i from accumulator acc, in\n"
              "// the chain's compute type (STORE_EPILOGUE converts it where it is stored)\n";
  c.params_type = "DotEpilogueParams";
  c.params_expr = "DotEpilogueRef(pc.epi_addr).p";
  c.index = "  uint col = i % p.n, rest = i / p.n, row = rest % p.m, bz = rest / p.m;\n";
  c.coords = {"bz", "row", "col"};
  for (int t = 0; t < NXV_EPILOGUE_TENSORS; ++t) {
    std::string n = std::to_string(t);
    c.at.push_back("bz * p.s[" + n + "][0] + row * p.s[" + n + "][1] + col * p.s[" + n + "][2]");
  }
  return c;
}

}  // namespace

std::string dot_epilogue_error(const CheckArgs& c, const DotAttrs& a, bool& invalid) {
  // Operand prologues compute in the same kernel.
  std::vector<DType> prologue_types = dot_prologue_types(a, {c.inputs[0].type, c.inputs[1].type}, c.device.has(kCapFloat64));
  return store_epilogue_error(c, *a.epilogue, a.product, "dot", invalid, 2, prologue_types);
}

DotEpilogue make_dot_epilogue(const LowerArgs& a, const DotAttrs& at) {
  DotEpilogue e;
  e.product = at.product;
  e.out = a.out.type;
  const Tensor& left = a.inputs[0].tensor;
  const Tensor& right = a.inputs[1].tensor;
  GemmShape g = gemm_shape(left.shape, right.shape, at);
  std::vector<std::array<int64_t, 3>> strides_of;  // {batch, m, n} element strides per tensor
  // The output's axes in order: batch, left free, right free.
  OperandAxes out_axes;
  out_axes.order.resize(a.out.shape.size());
  std::iota(out_axes.order.begin(), out_axes.order.end(), int64_t(0));
  out_axes.batch = at.left_batch.size();
  out_axes.first = free_axes(left.shape.size(), at.left_contract, at.left_batch).size();
  for (size_t i = 2; i < a.inputs.size(); ++i) {
    const Tensor& t = a.inputs[i].tensor;
    uint32_t elem = uint32_t(dtype_size(t.type));
    Tensor view = broadcast_view(t, a.out.shape);
    auto strides = collapse_groups(view.shape, view.strides, out_axes);
    e.extra.push_back(t.type);
    if (strides && max_element_index(view.shape, view.strides, view.offset) < kMaxIndex) {
      e.refs.push_back({a.inputs[i].slot, uint64_t(view.offset) * elem});
      strides_of.push_back(*strides);
      continue;
    }
    Tensor copy = empty(a.device, t.type, view.shape);
    uint32_t slot = a.builder.bind(copy.buffer);
    append_copy(a.device, a.builder, view, a.inputs[i].slot, copy, slot);
    e.refs.push_back({slot, 0});
    strides_of.push_back(*collapse_groups(copy.shape, copy.strides, out_axes));
  }
  DotEpilogueParams p{};
  p.m = uint32_t(g.m), p.n = uint32_t(g.n);
  for (size_t t = 0; t < e.refs.size(); ++t) {
    for (size_t k = 0; k < 3; ++k) p.s[t][k] = uint32_t(strides_of[t][k]);
    e.patches.push_back({uint32_t(offsetof(DotEpilogueParams, addr) + t * sizeof p.addr[0]), e.refs[t]});
  }
  e.params.resize(sizeof p);
  std::memcpy(e.params.data(), &p, sizeof p);
  generate_store_epilogue(e, *at.epilogue, a.device.has(kCapFloat64), dot_code());
  return e;
}

}  // namespace nxv
