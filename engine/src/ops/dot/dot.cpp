// The dot family: Nx's dot/7 (any contracting and batch axes, every type) as a batched GEMM
// C[b, m, n] = sum_k A[b, m, k] * B[b, k, n] (dot_plan.hpp). Operands are read through their
// strides where each axis group collapses to one stride (a transposed matrix needs no copy),
// else copied to row-major first in the same executable. M == 1 or N == 1 takes the
// matrix-vector kernel (except M == 1 on CPU drivers, which the row GEMM serves better),
// everything else a GEMM kernel (dot_kernels.hpp); on CPU drivers f32/f64 products go to the
// system's BLAS where it is found (dot_host.hpp). NX_VULKAN_DOT_F32=bf16x3 opts f32 GEMMs into
// a faster, less precise product on bf16 tensor cores (dot_bf16x3.hpp).
// Accumulation: integers in the output's compute type (Nx's wrap-around in the output type),
// f16/bf16/f8 in f32 rounded once at the end, f32 in f32 with fma, f64 in double, complex in
// (re, im) pairs of the output's precision. Inputs of other types than the output are
// converted on load, as Nx.BinaryBackend computes on their values.
// With an epilogue (compiled graphs: graph/epilogue_fusion.hpp) the kernels apply an elementwise
// chain where they store (dot_epilogue.hpp); the op's output type is then the chain's. With
// operand prologues (graph/prologue_fusion.hpp) they apply one where they load (dot_prologue.hpp).
#include <algorithm>
#include <numeric>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "kernels/glsl_types.hpp"
#include "memory/copy.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_bf16x3.hpp"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/dot_cpu.hpp"
#include "ops/dot/dot_rows.hpp"
#include "ops/dot/dot_epilogue.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_kernels.hpp"
#include "ops/dot/dot_plan.hpp"
#include "ops/dot/dot_prologue.hpp"
#include "ops/family.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr int64_t kMaxIndex = int64_t(1) << 31;

std::vector<int64_t> integers_or_empty(const AttrReader& r, const char* key) {
  return r.has(key) ? r.integers(key) : std::vector<int64_t>{};
}

// Axes in range and used at most once across `contract` and `batch`.
bool valid_axes(size_t rank, const std::vector<int64_t>& contract, const std::vector<int64_t>& batch) {
  std::vector<bool> seen(rank, false);
  for (const auto* list : {&contract, &batch})
    for (int64_t x : *list) {
      if (x < 0 || x >= int64_t(rank) || seen[size_t(x)]) return false;
      seen[size_t(x)] = true;
    }
  return true;
}

// The input's values convert to the output's kind as Nx promotes: no complex into a real
// output, no float into an integer one.
bool promotes_to(DType in, DType out) {
  if (is_complex(in)) return is_complex(out);
  if (is_float(in)) return is_float(out) || is_complex(out);
  return true;
}

class DotFamily final : public StoreEpilogueFamily<DotAttrs> {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    declare_dot_kernel_variants(out, info);
    declare_gemm_cpu_variants(out, info);
    declare_gemm_coopmat_variants(out, info);
    declare_split_bf16x3_variants(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId, const AttrReader& r) const override {
    DotAttrs a;
    a.left_contract = integers_or_empty(r, "left_contract");
    a.left_batch = integers_or_empty(r, "left_batch");
    a.right_contract = integers_or_empty(r, "right_contract");
    a.right_batch = integers_or_empty(r, "right_batch");
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    auto invalid = [](const std::string& why) { return not_native("dot: " + why, ErrorKind::InvalidArgument); };
    if (c.attrs.empty()) return invalid("needs its options (left_contract, left_batch, right_contract, right_batch)");
    const auto& a = c.attrs.as<DotAttrs>();
    if (!a.epilogue && c.inputs.size() != 2)
      return invalid("takes 2 tensors, got " + std::to_string(c.inputs.size()));
    if (c.inputs.size() < 2) return invalid("takes at least 2 tensors");
    const TensorSpec& l = c.inputs[0];
    const TensorSpec& r = c.inputs[1];
    if (!valid_axes(l.shape.size(), a.left_contract, a.left_batch) ||
        !valid_axes(r.shape.size(), a.right_contract, a.right_batch))
      return invalid("contracting and batch axes must be distinct axes of their operand");
    if (a.left_contract.size() != a.right_contract.size() || a.left_batch.size() != a.right_batch.size())
      return invalid("the operands need as many contracting axes and as many batch axes");
    for (size_t i = 0; i < a.left_contract.size(); ++i)
      if (l.shape[size_t(a.left_contract[i])] != r.shape[size_t(a.right_contract[i])])
        return invalid("contracting axes of different sizes");
    Shape want;
    for (size_t i = 0; i < a.left_batch.size(); ++i) {
      if (l.shape[size_t(a.left_batch[i])] != r.shape[size_t(a.right_batch[i])])
        return invalid("batch axes of different sizes");
      want.push_back(l.shape[size_t(a.left_batch[i])]);
    }
    for (int64_t x : free_axes(l.shape.size(), a.left_contract, a.left_batch)) want.push_back(l.shape[size_t(x)]);
    for (int64_t x : free_axes(r.shape.size(), a.right_contract, a.right_batch)) want.push_back(r.shape[size_t(x)]);
    if (c.out.shape != want) return invalid("the output shape is not batch, left free, right free axes");
    DType out = a.epilogue ? a.product : c.out.type;  // the product's type
    if (!promotes_to(l.type, out) || !promotes_to(r.type, out))
      return invalid("the output type " + std::string(dtype_name(out)) + " cannot hold the inputs' products");
    const DeviceCore& core = *c.device.impl().core;
    for (const Shape* s : {&l.shape, &r.shape, &c.out.shape}) {
      DType wider = dtype_size(c.out.type) > dtype_size(out) ? c.out.type : out;  // product or epilogue's
      DType t = s == &l.shape ? l.type : s == &r.shape ? r.type : wider;
      uint64_t n = uint64_t(shape_size(*s));
      if (n >= uint64_t(kMaxIndex) || n * dtype_size(t) > core.chunk_bytes())
        return not_native("dot: operands over 2^31 elements or one buffer chunk are not multiplied natively yet");
    }
    AccType acc = dot_acc_type(out);
    try {
      for (DType t : {l.type, r.type, out}) glsl_storage_type(t);
      fold_features({l.type, r.type, out}, acc).check(core, "dot");
    } catch (const Error& e) {
      return not_native(e.what());
    }
    if (a.prologue[0] || a.prologue[1]) {
      bool bad = false;
      if (std::string why = dot_prologue_error(c, a, bad); !why.empty())
        return not_native(why, bad ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
    }
    if (a.epilogue) {
      bool bad = false;
      if (std::string why = dot_epilogue_error(c, a, bad); !why.empty())
        return not_native(why, bad ? ErrorKind::InvalidArgument : ErrorKind::Unsupported);
      // The host BLAS takes no epilogue, and on a CPU driver it is far faster than the kernels
      // that would: graphs keep such products apart (and so the bits of the op run alone).
      if (host_gemm_candidate(c.device, out, gemm_shape(l.shape, r.shape, a), l.type, r.type))
        return not_native("dot: this product runs on the host BLAS, which takes no epilogue");
    }
    return {};
  }

  bool takes_operand_prologue(const GraphNode& n, size_t operand) const override {
    return operand < 2 && !n.attrs.empty() && !n.attrs.as<DotAttrs>().prologue[operand];
  }

  Attrs with_operand_prologue(const GraphNode& n, size_t operand, ElementwiseChain chain) const override {
    DotAttrs with = n.attrs.as<DotAttrs>();
    with.prologue.at(operand) = std::move(chain);
    return Attrs::of(std::move(with));
  }

  void lower(const LowerArgs& a) const override {
    const auto& at = a.attrs.as<DotAttrs>();
    const Tensor& left = a.inputs[0].tensor;
    const Tensor& right = a.inputs[1].tensor;
    GemmShape g = gemm_shape(left.shape, right.shape, at);
    GemmOperand A = operand(a, 0, left_axes(left.shape.size(), at));
    GemmOperand B = operand(a, 1, right_axes(right.shape.size(), at));
    if (at.prologue[0]) A.prologue = &*at.prologue[0];
    if (at.prologue[1]) B.prologue = &*at.prologue[1];
    DeviceImpl& impl = a.device.impl();
    BufferRef c{a.output_slot, 0};
    // CPU drivers: the system's BLAS where it can take the product (no epilogue or prologue:
    // kernels apply those).
    bool fused = at.epilogue || A.prologue || B.prologue;
    if (!fused && append_host_gemm(a.device, a.builder, a.out.type, g, A, B, c)) return;
    std::optional<DotEpilogue> epilogue;
    if (at.epilogue) epilogue = make_dot_epilogue(a, at);
    const DotEpilogue* epi = epilogue ? &*epilogue : nullptr;
    DType out = at.epilogue ? at.product : a.out.type;
    if (g.m == 1 && g.n > 1 && !rows_kernel_fits(*impl.core, g, B, out)) {
      // out[b, n] = sum_k B[b, k, n] * A[b, 0, k]: B's columns are the matrix's rows.
      GemmOperand mat{B.ref, B.type, {B.strides[0], B.strides[2], B.strides[1]}, B.prologue};
      append_matvec(impl, a.builder, out, uint32_t(g.batch), uint32_t(g.n), uint32_t(g.k), mat, A, c, epi, {{}, 0, 2});
    } else if (g.n == 1) {
      GemmOperand vec{B.ref, B.type, {B.strides[0], 0, B.strides[1]}, B.prologue};
      append_matvec(impl, a.builder, out, uint32_t(g.batch), uint32_t(g.m), uint32_t(g.k), A, vec, c, epi, {{}, 0, 1});
    } else if (matvec_per_column(*impl.core, g) && !tuning().dot.bf16x3) {
      // out[m, j] = sum_k A[m, k] * B[k, j]: column j of B is vector j, A the matrix of each.
      GemmOperand mat{A.ref, A.type, {0, A.strides[1], A.strides[2]}, A.prologue};
      GemmOperand vec{B.ref, B.type, {B.strides[2], 0, B.strides[1]}, B.prologue};
      append_matvec(impl, a.builder, out, uint32_t(g.n), uint32_t(g.m), uint32_t(g.k), mat, vec, c, epi,
                    {std::array<uint32_t, 2>{1, uint32_t(g.n)}, 2, 1});
    } else if (matvec_per_row(*impl.core, g) && !tuning().dot.bf16x3) {
      // out[i, n] = sum_k A[i, k] * B[k, n]: B^T is the matrix, row i of A vector i (as the
      // transposed product's columns are: permutation folding relies on it).
      GemmOperand mat{B.ref, B.type, {0, B.strides[2], B.strides[1]}, B.prologue};
      GemmOperand vec{A.ref, A.type, {A.strides[1], 0, A.strides[2]}, A.prologue};
      append_matvec(impl, a.builder, out, uint32_t(g.m), uint32_t(g.n), uint32_t(g.k), mat, vec, c, epi,
                    {std::array<uint32_t, 2>{uint32_t(g.n), 1}, 1, 2});
    } else if (A.prologue || B.prologue || !append_gemm_bf16x3(a, out, g, A, B, c, epi != nullptr)) {
      append_gemm(impl, a.builder, out, g, A, B, c, epi);
    }
  }

  // transpose(dot(a, b)) that swaps the free axes of a and b is dot(b, a), whose every sum
  // runs over k in the same order where no split or vector kernel takes it (sums_in_order).
  std::optional<GraphNode> with_permuted_result(Device& device, const GraphNode& n, const Graph& graph,
                                                std::span<const int64_t> perm) const override {
    if (n.attrs.empty() || n.inputs.size() != 2) return std::nullopt;
    const auto& a = n.attrs.as<DotAttrs>();
    if (a.epilogue || a.prologue[0] || a.prologue[1]) return std::nullopt;
    const Shape& ls = graph.value(n.inputs[0]).shape;
    const Shape& rs = graph.value(n.inputs[1]).shape;
    size_t batch = a.left_batch.size();
    size_t left_free = ls.size() - a.left_contract.size() - batch;
    size_t right_free = rs.size() - a.right_contract.size() - batch;
    if (perm.size() != batch + left_free + right_free) return std::nullopt;
    for (size_t i = 0; i < perm.size(); ++i) {
      size_t want = i < batch ? i : i < batch + right_free ? i + left_free : i - right_free;
      if (size_t(perm[i]) != want) return std::nullopt;
    }
    GemmShape g = gemm_shape(ls, rs, a);
    GemmShape swapped{g.batch, g.n, g.m, g.k};
    DType lt = graph.value(n.inputs[0]).type, rt = graph.value(n.inputs[1]).type;
    const DeviceCore& core = *device.impl().core;
    if (!sums_in_order(core, n.out.type, g, lt, rt) || !sums_in_order(core, n.out.type, swapped, rt, lt))
      return std::nullopt;
    DotAttrs b;
    b.left_contract = a.right_contract, b.left_batch = a.right_batch;
    b.right_contract = a.left_contract, b.right_batch = a.left_batch;
    return GraphNode{n.op, n.out, {n.inputs[1], n.inputs[0]}, Attrs::of(std::move(b))};
  }

 private:
  // Operand `i` as the kernels read it: in place when its axis groups collapse and every
  // index fits 32 bits, else a row-major copy of its permutation.
  static GemmOperand operand(const LowerArgs& a, size_t i, const OperandAxes& axes) {
    const Tensor& t = a.inputs[i].tensor;
    uint32_t elem = uint32_t(dtype_size(t.type));
    // An empty operand (no contracting extent) is never read: any bound buffer serves.
    if (t.size() == 0) return {{a.output_slot, 0}, t.type, {0, 0, 0}};
    auto strides = collapse_groups(t.shape, t.strides, axes);
    if (strides && max_element_index(t.shape, t.strides, 0) < kMaxIndex)
      return {{a.inputs[i].slot, uint64_t(t.offset) * elem}, t.type, *strides};
    Tensor view = transpose_view(t, axes.order);
    Tensor copy = empty(a.device, t.type, view.shape);
    uint32_t slot = a.builder.bind(copy.buffer);
    append_copy(a.device, a.builder, view, a.inputs[i].slot, copy, slot);
    OperandAxes in_order = axes;
    std::iota(in_order.order.begin(), in_order.order.end(), int64_t(0));
    return {{slot, 0}, t.type, *collapse_groups(copy.shape, copy.strides, in_order)};
  }
};

}  // namespace

const Family& dot_family() {
  static const DotFamily family;
  return family;
}

}  // namespace nxv
