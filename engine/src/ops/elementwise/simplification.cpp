// Graph simplifications of elementwise nodes (simplification.hpp).
#include "ops/elementwise/simplification.hpp"

#include <cmath>

#include "ops/elementwise/fusion.hpp"
#include "ops/elementwise/scalar_exprs.hpp"
#include "ops/shape/shape_attrs.hpp"

namespace nxv {
namespace {

// Whether an integer constant of `type` holds `v` itself (no wrap into the type's range).
bool integer_constant_unchanged(DType type, const AttrNumber& v) {
  if (v.kind != AttrNumber::Kind::Int && v.kind != AttrNumber::Kind::UInt) return false;
  const int bits = int(dtype_size(type)) * 8;
  if (is_signed(type)) {
    if (v.kind == AttrNumber::Kind::UInt) return v.u <= uint64_t(INT64_MAX) >> (64 - bits);
    return bits == 64 || (v.i >= -(int64_t(1) << (bits - 1)) && v.i < (int64_t(1) << (bits - 1)));
  }
  uint64_t u = v.kind == AttrNumber::Kind::UInt ? v.u : uint64_t(v.i);
  if (v.kind == AttrNumber::Kind::Int && v.i < 0) return false;
  return bits == 64 || u < (uint64_t(1) << bits);
}

const GraphNode* producer_of(const Graph& graph, uint32_t value) {
  return value < graph.input_count() ? nullptr : &graph.nodes()[value - graph.input_count()];
}

// Whether the float `type` holds ±2^p as a normal number.
bool normal_power_of_two_in(DType type, int p) {
  switch (type) {
    case DType::F16: return p >= -14 && p <= 15;
    case DType::BF16:
    case DType::F32: return p >= -126 && p <= 127;
    case DType::F64: return p >= -1022 && p <= 1022;  // its reciprocal normal too
    default: return false;
  }
}

// The reciprocal of a constant node of ±2^p, where the constant's type and `through` (the type
// it is read as before the division converts it to double) hold it as a normal number, and
// p is within [-1022, 1022] (a normal double reciprocal): 1/K is then exact.
std::optional<double> power_of_two_reciprocal(const GraphNode* constant, DType through) {
  if (!constant || constant->op != OpId::constant || constant->attrs.empty()) return std::nullopt;
  const AttrNumber& v = constant->attrs.as<ShapeAttrs>().value;
  const DType type = constant->out.type;
  double k;
  if (v.kind == AttrNumber::Kind::Float && is_float(type)) {
    k = v.re;
  } else if ((v.kind == AttrNumber::Kind::Int || v.kind == AttrNumber::Kind::UInt) && is_integer(type) &&
             integer_constant_unchanged(type, v)) {
    k = v.kind == AttrNumber::Kind::Int ? double(v.i) : double(v.u);  // a power of two converts exactly
  } else {
    return std::nullopt;
  }
  // An integer select holds the constant as its own integer.
  if (is_integer(through) && (!is_integer(type) || !integer_constant_unchanged(through, v))) return std::nullopt;
  if (!std::isfinite(k) || k == 0) return std::nullopt;
  int e;
  double m = std::frexp(k, &e);
  if (std::abs(m) != 0.5) return std::nullopt;
  const int p = e - 1;
  if (is_float(type) && !normal_power_of_two_in(type, p)) return std::nullopt;
  if (is_float(through) && !normal_power_of_two_in(through, p)) return std::nullopt;
  if (!normal_power_of_two_in(DType::F64, p)) return std::nullopt;
  return 1.0 / k;
}

Attrs constant_attrs(double value) {
  ShapeAttrs a;
  a.value = AttrNumber{.kind = AttrNumber::Kind::Float, .re = value};
  return Attrs::of(a);
}

}  // namespace

// grad's `x == max(x, 0)` of a ReLU: the same answers as the exact mixed comparison, without its
// conversions and branches.
std::optional<uint32_t> simplify_comparison_with_constant(const GraphNode& n, const Graph& graph,
                                                          std::span<const uint32_t> inputs, Graph& out) {
  const EwDef* def = elementwise_def(n.op);
  if (!def || def->load != EwLoad::Common || def->out != EwOut::U8 || n.inputs.size() != 2) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    uint32_t c = n.inputs[k], other = n.inputs[1 - k];
    const GraphNode* producer = producer_of(graph, c);
    const DType int_type = graph.value(c).type, float_type = graph.value(other).type;
    if (!producer || producer->op != OpId::constant || producer->attrs.empty() || !is_integer(int_type) ||
        !is_float(float_type))
      continue;
    const AttrNumber& v = producer->attrs.as<ShapeAttrs>().value;
    if (!integer_constant_unchanged(int_type, v) || !chain_constant_literal(float_type, v)) continue;
    std::vector<uint32_t> operands(inputs.begin(), inputs.end());
    operands[k] = out.add(OpId::constant, OutSpec{float_type, graph.value(c).shape}, {}, producer->attrs);
    return out.add(n.op, n.out, std::move(operands), n.attrs);
  }
  return std::nullopt;
}

// Nx's gradient of max and min divides by the number of operands tied for the result, a select
// of 2 and 1: an IEEE division (a reciprocal and seven multiply-adds, on a loop kernel's
// critical path) where a multiplication by 0.5 or 1 gives the same bits. A division computes in
// double for f64 and, where the device has f64, for f32 (scalar_exprs.cpp: computes_in_f64),
// rounding once to f32; the product is built the same way: widened operands (exact), a double
// product that equals the quotient exactly (the divisor a power of two, its reciprocal normal),
// rounded once. f16 and bf16 keep their division (their rounding from double is their own).
std::optional<uint32_t> simplify_division_by_power_of_two(const GraphNode& n, std::span<const uint32_t> inputs,
                                                          Graph& out, bool has_f64) {
  if (n.inputs.size() != 2) return std::nullopt;
  const DType type = n.out.type;
  if (type != DType::F64 && !(type == DType::F32 && has_f64)) return std::nullopt;
  const uint32_t dividend = inputs[0], divisor = inputs[1];
  if (!is_float(out.value(dividend).type)) return std::nullopt;
  const OutSpec divisor_spec = out.value(divisor);  // a copy: adding nodes moves `out`'s values
  const GraphNode* d = producer_of(out, divisor);
  if (!d) return std::nullopt;
  // The reciprocal (a constant, or a select of two) in double, of the divisor's shape.
  uint32_t reciprocal;
  if (auto r = power_of_two_reciprocal(d, divisor_spec.type)) {
    reciprocal = out.add(OpId::constant, OutSpec{DType::F64, divisor_spec.shape}, {}, constant_attrs(*r));
  } else if (d->op == OpId::select && d->inputs.size() == 3) {
    const uint32_t pred = d->inputs[0], on_true = d->inputs[1], on_false = d->inputs[2];
    auto r1 = power_of_two_reciprocal(producer_of(out, on_true), divisor_spec.type);
    auto r2 = power_of_two_reciprocal(producer_of(out, on_false), divisor_spec.type);
    if (!r1 || !r2) return std::nullopt;
    uint32_t k1 = out.add(OpId::constant, OutSpec{DType::F64, out.value(on_true).shape}, {}, constant_attrs(*r1));
    uint32_t k2 = out.add(OpId::constant, OutSpec{DType::F64, out.value(on_false).shape}, {}, constant_attrs(*r2));
    reciprocal = out.add(OpId::select, OutSpec{DType::F64, divisor_spec.shape}, {pred, k1, k2});
  } else {
    return std::nullopt;
  }
  if (type == DType::F64) return out.add(OpId::multiply, n.out, {dividend, reciprocal});
  uint32_t wide = out.add(OpId::as_type, OutSpec{DType::F64, out.value(dividend).shape}, {dividend});
  uint32_t product = out.add(OpId::multiply, OutSpec{DType::F64, n.out.shape}, {wide, reciprocal});
  return out.add(OpId::as_type, n.out, {product});
}

}  // namespace nxv
