#include "ops/elementwise/elementwise_host.hpp"

#include <algorithm>
#include <array>
#include <type_traits>
#include <cstdint>
#include <cstring>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/host_workers.hpp"
#include "ops/dot/dot_host.hpp"

namespace nxv {
namespace {

constexpr int64_t kMinElements = int64_t(1) << 16;
constexpr int64_t kElementsPerPart = int64_t(1) << 17;
constexpr size_t kBlock = 512;

// Exactly rounded float arithmetic, and integer arithmetic that wraps around as the kernels'
// does (divide is a float op in Nx; quotient, with Nx's rules for zero, stays on the device).
bool host_op(OpId op, DType type) {
  using enum OpId;
  return op == add || op == subtract || op == multiply || op == negate || (op == divide && is_float(type));
}

bool host_type(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::S32 || t == DType::S64 || t == DType::U32 ||
         t == DType::U64;
}

// Integers in their unsigned type: wrap-around without undefined behaviour.
template <typename T, bool = std::is_integral_v<T>>
struct WrappingOf {
  using type = T;
};
template <typename T>
struct WrappingOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wrapping = typename WrappingOf<T>::type;

// Where a step reads an operand within the current block: `p[j * stride]`.
template <typename T>
struct Source {
  const T* p;
  size_t stride;  // 1, or 0 for one element
};

template <typename T, bool X, bool Y, typename F>
void binary_loop(size_t n, const T* x, const T* y, T* out, F f) {
  for (size_t j = 0; j < n; ++j) out[j] = f(x[X ? j : 0], y[Y ? j : 0]);
}

template <typename T, typename F>
void binary(size_t n, Source<T> x, Source<T> y, T* out, F f) {
  if (x.stride && y.stride) binary_loop<T, true, true>(n, x.p, y.p, out, f);
  else if (x.stride) binary_loop<T, true, false>(n, x.p, y.p, out, f);
  else if (y.stride) binary_loop<T, false, true>(n, x.p, y.p, out, f);
  else binary_loop<T, false, false>(n, x.p, y.p, out, f);
}

template <typename T>
void apply(OpId op, size_t n, const std::vector<Source<T>>& in, T* out) {
  using W = Wrapping<T>;
  switch (op) {
    case OpId::add: return binary(n, in[0], in[1], out, [](T a, T b) { return T(W(a) + W(b)); });
    case OpId::subtract: return binary(n, in[0], in[1], out, [](T a, T b) { return T(W(a) - W(b)); });
    case OpId::multiply: return binary(n, in[0], in[1], out, [](T a, T b) { return T(W(a) * W(b)); });
    case OpId::divide:
      if constexpr (std::is_floating_point_v<T>) return binary(n, in[0], in[1], out, [](T a, T b) { return a / b; });
      return;  // host_op() admits floats only
    case OpId::negate: {
      // Floats flip the sign (-0.0 for 0.0), integers wrap (the most negative stays).
      auto neg = [](T a) { return std::is_floating_point_v<T> ? T(-a) : T(W(0) - W(a)); };
      if (in[0].stride) for (size_t j = 0; j < n; ++j) out[j] = neg(in[0].p[j]);
      else std::fill(out, out + n, neg(in[0].p[0]));
      return;
    }
    default: return;  // host_op() admits no other
  }
}

template <typename T>
struct Run {
  ElementwiseChain chain;
  std::vector<BufferRef> inputs;
  // Each input's period: element i reads element i % period (1: one element broadcast; n:
  // dense like the output; between: a dense tensor repeated along leading axes, a bias).
  std::vector<int64_t> period;
  // Inputs of f32 into an f64 op (single elements only): widened, exactly, as the kernel does.
  std::vector<bool> widened;
  BufferRef out;
  int64_t n = 0;

  void operator()(std::span<const std::shared_ptr<Buffer>> buffers) const {
    std::vector<const T*> in;
    std::vector<T> wide(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::byte* address = host_address(*buffers[inputs[k].slot], inputs[k]);
      if (widened[k]) {
        float v;
        std::memcpy(&v, address, sizeof v);
        wide[k] = T(v);
        in.push_back(&wide[k]);
      } else {
        in.push_back(reinterpret_cast<const T*>(address));
      }
    }
    T* o = reinterpret_cast<T*>(host_address(*buffers[out.slot], out));
    std::vector<T> constants;
    for (const auto& c : chain.constants)
      constants.push_back(c.value.kind == AttrNumber::Kind::Float ? T(c.value.re)
                          : c.value.kind == AttrNumber::Kind::Int ? T(c.value.i)
                                                                  : T(c.value.u));
    size_t parts = size_t(std::clamp<int64_t>(n / kElementsPerPart, 1, int64_t(host_parallelism())));
    run_host_parts(parts, [&](size_t part) {
      std::vector<std::array<T, kBlock>> steps(chain.steps.size()), repeated(inputs.size());
      std::vector<Source<T>> operands, sources(inputs.size());
      int64_t lo = n * int64_t(part) / int64_t(parts), hi = n * int64_t(part + 1) / int64_t(parts);
      for (int64_t i0 = lo; i0 < hi; i0 += int64_t(kBlock)) {
        size_t len = size_t(std::min<int64_t>(int64_t(kBlock), hi - i0));
        for (size_t k = 0; k < inputs.size(); ++k) {
          const int64_t p = period[k];
          if (p == 1 || p == n) {
            sources[k] = p == 1 ? Source<T>{in[k], 0} : Source<T>{in[k] + i0, 1};
            continue;
          }
          for (size_t j = 0; j < len;) {  // the block's elements in runs up to the period's end
            int64_t at = (i0 + int64_t(j)) % p;
            size_t run = size_t(std::min<int64_t>(int64_t(len - j), p - at));
            std::copy(in[k] + at, in[k] + at + run, repeated[k].data() + j);
            j += run;
          }
          sources[k] = {repeated[k].data(), 1};
        }
        for (size_t s = 0; s < chain.steps.size(); ++s) {
          const ChainStep& step = chain.steps[s];
          operands.clear();
          for (const ChainOperand& x : step.operands) {
            if (x.from == ChainOperand::From::Input)
              operands.push_back(sources[x.index]);
            else if (x.from == ChainOperand::From::Constant)
              operands.push_back({&constants[x.index], 0});
            else
              operands.push_back({steps[x.index].data(), 1});
          }
          T* dst = s + 1 == chain.steps.size() ? o + i0 : steps[s].data();
          apply<T>(step.op, len, operands, dst);
        }
      }
    });
  }
};

// How a view of the output's shape repeats its elements: its period (above), or 0 where it is
// not a dense tensor repeated along leading axes.
int64_t period_of(const Tensor& v) {
  size_t d = v.shape.size();
  int64_t period = 1;
  while (d > 0 && (v.shape[d - 1] == 1 || v.strides[d - 1] == period)) period *= v.shape[--d];
  while (d > 0 && (v.shape[d - 1] == 1 || v.strides[d - 1] == 0)) --d;
  return d == 0 ? period : 0;
}

// The op as a chain of host arithmetic on `type`, or nullopt.
std::optional<ElementwiseChain> host_chain(const LowerArgs& a, size_t inputs) {
  ElementwiseChain chain;
  if (a.op == OpId::elementwise_chain) {
    chain = a.attrs.as<ElementwiseChain>();
  } else {
    ChainStep step{a.op, a.out.type, {}};
    for (uint32_t i = 0; i < inputs; ++i) step.operands.push_back({ChainOperand::From::Input, i});
    chain.steps.push_back(std::move(step));
  }
  for (const auto& c : chain.constants) {
    if (c.type != a.out.type || !chain_constant_literal(c.type, c.value)) return std::nullopt;
    if (c.value.kind == AttrNumber::Kind::Complex) return std::nullopt;
  }
  for (const auto& step : chain.steps) {
    if (!host_op(step.op, step.out) || step.out != a.out.type) return std::nullopt;
    for (const auto& o : step.operands)
      if (o.from == ChainOperand::From::Input && o.index >= inputs) return std::nullopt;
  }
  return chain;
}

}  // namespace

bool append_host_elementwise(const LowerArgs& a, const std::vector<Tensor>& views, const std::vector<uint32_t>& slots) {
#if !defined(__x86_64__)
  return false;
#endif
  Toggle t = tuning().ew_host;
  int64_t n = shape_size(a.out.shape);
  if (t == Toggle::Off || n == 0 || !cpu_paths(a.device.impl().core->profile())) return false;
  if (!host_type(a.out.type)) return false;
  if (!a.output.is_contiguous()) return false;
  auto chain = host_chain(a, views.size());
  if (!chain) return false;
  // Below kMinElements only where it runs at once (an eager op on an idle stream): it then
  // takes less than the kernel's recording and submission alone.
  bool immediate = n < kMinElements && a.builder.immediate_host();
  if (t == Toggle::Auto && n < kMinElements && !immediate) return false;
  const uint64_t e = dtype_size(a.out.type);
  if (!host_reachable(a.builder.buffer(a.output_slot), {a.output_slot, uint64_t(a.output.offset) * e}, uint64_t(n) * e))
    return false;
  std::vector<BufferRef> refs;
  std::vector<int64_t> periods;
  std::vector<bool> widened;
  for (size_t k = 0; k < views.size(); ++k) {
    const Tensor& v = views[k];
    int64_t p = period_of(v);
    bool widen = v.type == DType::F32 && a.out.type == DType::F64 && p == 1;
    if ((v.type != a.out.type && !widen) || p == 0) return false;
    const uint64_t ve = dtype_size(v.type);
    BufferRef r{slots[k], uint64_t(v.offset) * ve};
    if (!host_reachable(a.builder.buffer(slots[k]), r, uint64_t(p) * ve)) return false;
    refs.push_back(r);
    periods.push_back(p);
    widened.push_back(widen);
  }
  BufferRef out{a.output_slot, uint64_t(a.output.offset) * e};
  auto step = [&]<typename T>(T) -> Launch& {
    return a.builder.host_step(Run<T>{*chain, refs, periods, widened, out, n});
  };
  Launch& l = a.out.type == DType::F32   ? step(float{})
              : a.out.type == DType::F64 ? step(double{})
              : a.out.type == DType::S32 ? step(int32_t{})
              : a.out.type == DType::S64 ? step(int64_t{})
              : a.out.type == DType::U32 ? step(uint32_t{})
                                         : step(uint64_t{});
  l.immediate = immediate;
  for (uint32_t s : slots) a.builder.use(l, s, Access::Read);
  a.builder.use(l, a.output_slot, Access::Write);
  return true;
}

}  // namespace nxv
