// Elementwise arithmetic on CPU drivers through the host. llvmpipe vectorizes a kernel across
// its invocations and reads every operand with a gather: a dense f32 update like SGD's
// w - lr * g ran at 7 ns an element, twenty times numpy's. Where an op or fused chain is only
// exactly rounded arithmetic (add, subtract, multiply, divide, negate) on f32 or f64, or
// wrapping integer arithmetic (add, subtract, multiply, negate) on 32- and 64-bit integers,
// with dense or single-element operands of the output's type, the host computes it in stream
// order (a host step, as the host BLAS products are), with the bits of the kernel: IEEE
// operations round the same everywhere, integers wrap the same, and llvmpipe keeps subnormals
// as the host does (tests check all three).
//
// Taken for at least 2^16 elements (smaller ones cost less on the device than the wait for
// the work before them), and for fewer as an eager op on an idle stream (LaunchBuilder::
// immediate_host: computed at once on the calling thread, which then waits for nothing), on
// x86-64 (where that test runs); tuning's ew.host=0 never, =1 at any size.
#pragma once
#include <vector>

#include "ops/family.hpp"

namespace nxv {

// Appends the host step and returns true where this path takes the op; false (nothing
// appended) where the kernels should. `views` are the inputs broadcast to the output's shape.
bool append_host_elementwise(const LowerArgs& a, const std::vector<Tensor>& views, const std::vector<uint32_t>& slots);

}  // namespace nxv
