// The linalg family: triangular_solve (Nx.Backend triangular_solve/4) natively, every option
// (left_side, lower, transform_a :none / :transpose / :conjugate), batches, vector and matrix
// right-hand sides, in double (trsv.comp): one workgroup per right-hand side of each batch.
// Operands that are not row-major are copied first. Devices without f64, f16/bf16 results and
// systems larger than shared memory holds leave it to the host.
#include <algorithm>

#include "device/device_impl.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "memory/copy.hpp"
#include "ops/family.hpp"
#include "ops/linalg/triangular_solve_push.h"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 64;
constexpr uint32_t kMaxN = 4096;

struct TriangularSolveAttrs {
  bool left_side = true;
  bool lower = true;
  std::string transform = "none";
};

bool complex_type(DType t) { return t == DType::C64 || t == DType::C128; }

Support invalid(std::string why) { return not_native(std::move(why), ErrorKind::InvalidArgument); }

// Elements of the solved vector a workgroup keeps in shared memory, beside its partial sums.
uint32_t max_n(const DeviceInfo& info, bool complex) {
  uint32_t xt = complex ? 16 : 8, shared = info.max_shared_memory ? info.max_shared_memory : 16384;
  return std::min<uint32_t>(kMaxN, (shared - kWorkgroupSize * xt) / xt);
}

// The geometry of a request: batches, the system's size, right-hand sides per batch and how
// b lays them out (row-major).
struct Geometry {
  uint64_t batches = 1, n = 0, rhs = 1, b_batch = 0, rhs_stride = 1, elem_stride = 1;
};

std::optional<Geometry> geometry(const Shape& a, const Shape& b, bool left_side) {
  if (a.size() < 2 || a[a.size() - 1] != a[a.size() - 2]) return std::nullopt;
  Geometry g;
  g.n = uint64_t(a.back());
  size_t batch_rank = a.size() - 2;
  for (size_t d = 0; d < batch_rank; ++d) g.batches *= uint64_t(a[d]);
  bool vector = b.size() == batch_rank + 1;
  if (!vector && b.size() != batch_rank + 2) return std::nullopt;
  if (!std::equal(a.begin(), a.begin() + ptrdiff_t(batch_rank), b.begin())) return std::nullopt;
  if (vector) {
    if (uint64_t(b.back()) != g.n) return std::nullopt;
    g.b_batch = g.n;
    return g;
  }
  uint64_t rows = uint64_t(b[b.size() - 2]), cols = uint64_t(b.back());
  g.b_batch = rows * cols;
  if (left_side) {  // columns of b: c_i = b[i, r]
    if (rows != g.n) return std::nullopt;
    g.rhs = cols, g.rhs_stride = 1, g.elem_stride = cols;
  } else {  // rows of b: X op(A) = B is op(A)^T X^T = B^T
    if (cols != g.n) return std::nullopt;
    g.rhs = rows, g.rhs_stride = cols, g.elem_stride = 1;
  }
  return g;
}

std::string load_expr(DType t, bool complex_compute) {
  if (t == DType::C128) return "(x)";
  if (t == DType::C64) return "dvec2(x)";
  std::string real = glsl_load(t, AccType::F64);
  return complex_compute ? "dvec2(" + real + ", 0.0LF)" : real;
}

// A variant of trsv.comp: types of the result and the operands, and the longest system it
// solves (the solution stays in shared memory: max_n of the device).
struct TrsvVariant {
  static constexpr const char* kTemplate = "trsv";
  DType out = DType::F64, a = DType::F64, b = DType::F64;
  uint32_t max_n = kMaxN;

  auto fields() const { return std::tie(out, a, b, max_n); }

  KernelKey source() const {
    bool complex = complex_type(out);
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    auto& d = key.defines;
    fold_features({out, a, b}, AccType::F64).add_defines(d);
    d.emplace_back("XT", complex ? "dvec2" : "double");
    d.emplace_back("COMPLEX", complex ? "1" : "0");
    add_buffer_defines(d, "A", a);
    add_buffer_defines(d, "B", b);
    add_buffer_defines(d, "OUT", out);
    d.emplace_back("LOAD_A(x)", load_expr(a, complex));
    d.emplace_back("LOAD_B(x)", load_expr(b, complex));
    d.emplace_back("STORE_X(v)", out == DType::F32 ? "float(v)" : out == DType::C64 ? "vec2(v)" : "(v)");
    d.emplace_back("MAX_N", std::to_string(max_n) + "u");
    d.emplace_back("WG", std::to_string(kWorkgroupSize) + "u");
    append_glsl_use_defines(d);
    return key;
  }

  // Each result type with operands of one type it takes, and with one operand of the result's.
  static std::vector<TrsvVariant> declared(const DeviceInfo& info) {
    std::vector<TrsvVariant> all;
    for (DType out : {DType::F32, DType::F64, DType::C64, DType::C128}) {
      uint32_t limit = ::nxv::max_n(info, complex_type(out));
      auto add = [&](DType a, DType b) {
        TrsvVariant v{out, a, b, limit};
        if (std::find_if(all.begin(), all.end(), [&](const TrsvVariant& w) { return w.fields() == v.fields(); }) ==
            all.end())
          all.push_back(v);
      };
      for (DType t : kAllDTypes) {
        if (t == DType::F8 || t == DType::F8E4M3FN || (complex_type(t) && !complex_type(out))) continue;
        add(t, t);
        add(out, t);
        add(t, out);
      }
    }
    return all;
  }
};

class LinalgFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<TrsvVariant>(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnAttrs; }

  Attrs decode(OpId, const AttrReader& r) const override {
    TriangularSolveAttrs a;
    if (r.has("left_side")) a.left_side = r.boolean("left_side");
    if (r.has("lower")) a.lower = r.boolean("lower");
    if (r.has("transform_a")) a.transform = r.atom("transform_a");
    if (a.transform != "none" && a.transform != "transpose" && a.transform != "conjugate")
      throw Error(ErrorKind::InvalidArgument, "option transform_a: expected none, transpose or conjugate");
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    const auto& at = c.attrs.empty() ? TriangularSolveAttrs{} : c.attrs.as<TriangularSolveAttrs>();
    if (c.inputs.size() != 2) return invalid("triangular_solve takes a and b");
    DType out = c.out.type;
    if (out != DType::F32 && out != DType::F64 && !complex_type(out))
      return not_native("triangular_solve runs natively into f32, f64, c64 and c128");
    for (const TensorSpec& t : c.inputs) {
      if (t.type == DType::F8 || t.type == DType::F8E4M3FN) return not_native("triangular_solve of f8 operands");
      if (complex_type(t.type) && !complex_type(out)) return invalid("a complex operand needs a complex result");
    }
    auto g = geometry(c.inputs[0].shape, c.inputs[1].shape, at.left_side);
    if (!g) return invalid("a is [..., n, n] and b [..., n] or [..., n, m] ([..., m, n] with left_side: false)");
    if (c.out.shape != c.inputs[1].shape) return invalid("the result has b's shape");
    if (!c.device.has(kCapFloat64)) return not_native("triangular_solve computes in double: this device has no f64");
    const DeviceInfo& info = c.device.impl().core->info();
    if (g->n > max_n(info, complex_type(out)))
      return not_native("triangular_solve of systems over " + std::to_string(max_n(info, complex_type(out))) +
                        " unknowns (its solution stays in shared memory)");
    if (g->rhs > info.max_workgroup_count[0] || g->batches > info.max_workgroup_count[1])
      return not_native("triangular_solve of more right-hand sides or batches than one dispatch holds");
    if (g->batches * g->n * g->n >= (uint64_t(1) << 31) || g->batches * g->b_batch >= (uint64_t(1) << 31))
      return not_native("triangular_solve of operands over 2^31 elements");
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const auto& at = a.attrs.empty() ? TriangularSolveAttrs{} : a.attrs.as<TriangularSolveAttrs>();
    Geometry g = *geometry(a.inputs[0].tensor.shape, a.inputs[1].tensor.shape, at.left_side);
    if (a.output.size() == 0) return;
    // Row-major operands, each within one buffer chunk.
    auto row_major = [&](const LowerInput& in) -> std::pair<Tensor, uint32_t> {
      const Tensor& t = in.tensor;
      uint64_t bytes = uint64_t(t.size()) * dtype_size(t.type);
      if (t.is_contiguous() && bytes <= t.buffer->bytes_left_in_chunk(uint64_t(t.offset) * dtype_size(t.type)))
        return {t, in.slot};
      Tensor copy = empty(a.device, t.type, t.shape);
      if (bytes > copy.buffer->bytes_left_in_chunk(0))
        throw Error(ErrorKind::Unsupported, "triangular_solve of an operand over one device buffer chunk");
      uint32_t slot = a.builder.bind(copy.buffer);
      append_copy(a.device, a.builder, t, in.slot, copy, slot);
      return {copy, slot};
    };
    auto [ta, sa] = row_major(a.inputs[0]);
    auto [tb, sb] = row_major(a.inputs[1]);
    const Tensor& out = a.output;
    if (uint64_t(out.size()) * dtype_size(out.type) > out.buffer->bytes_left_in_chunk(0))
      throw Error(ErrorKind::Unsupported, "triangular_solve of a result over one device buffer chunk");
    uint32_t limit = max_n(a.device.impl().core->info(), complex_type(out.type));
    const Kernel& kernel = a.device.impl().kernels.get(TrsvVariant{out.type, ta.type, tb.type, limit});
    // M = op(A) on the left, op(A)^T on the right: transposed where exactly one of those holds.
    TriangularSolvePush push{};
    push.n = uint32_t(g.n), push.rhs = uint32_t(g.rhs), push.batches = uint32_t(g.batches);
    push.b_batch = uint32_t(g.b_batch), push.rhs_stride = uint32_t(g.rhs_stride), push.elem_stride = uint32_t(g.elem_stride);
    push.transposed = (!at.left_side) != (at.transform == "transpose") ? 1 : 0;
    push.conjugate = at.transform == "conjugate" ? 1 : 0;
    push.lower = at.lower != (push.transposed != 0) ? 1 : 0;
    uint64_t ea = dtype_size(ta.type), eb = dtype_size(tb.type);
    Launch& l = a.builder.launch(kernel, {uint32_t(g.rhs), uint32_t(g.batches), 1}, push,
                                 {{offsetof(TriangularSolvePush, a_addr), {sa, uint64_t(ta.offset) * ea}},
                                  {offsetof(TriangularSolvePush, b_addr), {sb, uint64_t(tb.offset) * eb}},
                                  {offsetof(TriangularSolvePush, x_addr), {a.output_slot, 0}}});
    a.builder.use(l, sa, Access::Read);
    a.builder.use(l, sb, Access::Read);
    a.builder.use(l, a.output_slot, Access::Write);
  }
};

}  // namespace

const Family& linalg_family() {
  static const LinalgFamily family;
  return family;
}

}  // namespace nxv
