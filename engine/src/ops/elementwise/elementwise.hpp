// What other code (fusion, other families' prologues and epilogues) uses of the elementwise
// family: its kernel key from scalar expressions, and its launches.
#pragma once
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "exec/launch.hpp"
#include "ops/elementwise/scalar_exprs.hpp"

namespace nxv {

// A fused chain's expression and the functions it calls (part of its kernel's variant).
struct GeneratedExpr {
  ScalarExpr expr;
  std::string generated;
  auto fields() const { return std::tie(expr, generated); }
};

// A variant of elementwise.comp: one op's expression, or a chain's, over one to three operands.
struct ElementwiseVariant {
  static constexpr const char* kTemplate = "elementwise";
  OpId op = OpId::add;  // elementwise_chain: `chain` holds the expression
  DType out = DType::F32;
  std::vector<DType> in{};
  bool linear = true;      // dense operands
  bool vec4 = false;       // four-wide loads and stores
  bool cpu_loops = false;  // the loops of CPU drivers (elementwise_kernel_key)
  bool has_f64 = true;     // the device computes in double where Nx's rounding needs it
  uint32_t workgroup = 256;
  std::optional<GeneratedExpr> chain{};

  auto fields() const { return std::tie(op, out, in, linear, vec4, cpu_loops, has_f64, workgroup, chain); }
  KernelKey source() const;
  static std::vector<ElementwiseVariant> declared(const DeviceInfo& info);
};

// A variant of elementwise_wide.comp: a chain over four to eight operands.
struct ElementwiseWideVariant {
  static constexpr const char* kTemplate = "elementwise_wide";
  DType out = DType::F32;
  std::vector<DType> in{};
  uint32_t workgroup = 256;
  GeneratedExpr chain{};

  auto fields() const { return std::tie(out, in, workgroup, chain); }
  KernelKey source() const;
};

// The elementwise template specialised for one expression over inputs of types `in`;
// `cpu_loops`: the loops of CPU drivers, which vectorize across invocations themselves: dense
// operands one element per trip with the op inlined once (see elementwise_one_wide), strided
// ones in runs along the last axis (see strided_runs in exec/linear_plan.hpp); `generated`: GLSL the
// expression calls (a fused chain's functions).
KernelKey elementwise_kernel_key(const ScalarExpr& s, DType out, const std::vector<DType>& in, bool linear, bool vec4,
                                 bool cpu_loops, std::string generated = {});

// The key of elementwise_wide.comp for a generated chain over four to eight operands
// (`generated`: the chain's functions; the operands' buffer types are added to it).
KernelKey wide_kernel_key(const ScalarExpr& s, DType out, const std::vector<DType>& in, std::string generated);

// Whether a dense kernel of `op` on `device` loops one element a trip: on CPU drivers, which
// vectorize across invocations themselves, for ops of a few instructions (the GPU's loops
// inline the op four times and more, which only lengthens the driver's compile); long math
// keeps the GPU's loops, whose independent elements lavapipe overlaps, for outputs of more than
// kOneWideMaxElements (smaller ones, where its 1.5-1.9x slower loop costs microseconds, take
// the variant that compiles in half the time: a first call is usually small). Read per call:
// NXV_EW_ONE_WIDE=1 gives every dense kernel on a CPU device one element a trip (the first
// call of sin on lavapipe in about half the CPU time, its throughput 1.8x lower);
// NXV_EW_GPU_LOOPS=1 gives CPU devices the GPU's loops (tests run those on lavapipe).
inline constexpr int64_t kOneWideMaxElements = 1 << 16;

// Whether `in` broadcasts to `out` by Nx's rule (trailing axes aligned, extents equal or 1).
bool broadcastable(const Shape& in, const Shape& out);
bool elementwise_one_wide(Device& device, OpId op, DType out, int64_t elements = 0);

// Appends the launches of `kernel` over `out` (contiguous) with inputs `views` (broadcast to
// out's shape) bound to `slots`.
void emit_elementwise_launches(Device& device, LaunchBuilder& builder, const Kernel& kernel, const Tensor& out,
                               uint32_t out_slot, const std::vector<Tensor>& views, const std::vector<uint32_t>& slots,
                               bool dense);

// Appends Nx's as_type of `in` (any view broadcastable to out's shape) into `out` (contiguous).
void append_as_type(Device& device, LaunchBuilder& builder, const Tensor& in, uint32_t in_slot, const Tensor& out,
                    uint32_t out_slot);

// The as_type kernel from `from` to `to` over dense operands (no four-wide access).
const Kernel& as_type_kernel(Device& device, DType to, DType from);

}  // namespace nxv
