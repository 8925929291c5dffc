// A product computed inside one workgroup with the bits of its eager kernel (a loop kernel's
// dot, ops/loop/loop_kernel.hpp): the products the eager path takes as one matrix-vector
// product (matvec.comp, or gemm_rows.comp on CPU drivers, which sums k in order), with
// its operands' layouts and no split-K, described by how each sum runs.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/glsl_types.hpp"
#include "nxv/device.hpp"
#include "nxv/tensor.hpp"
#include "ops/dot/dot_attrs.hpp"

namespace nxv {

// out[r] = sum_k mat[r * mat_row + k * mat_k] * vec[k * vec_k], r < rows; `mat_operand` is 0
// for the left operand, 1 for the right. Each sum is split over `k_lanes` lanes, lane l
// summing k = l, l + k_lanes, ... in order with MAC, then lane l adds lane l + s for s from
// k_lanes / 2 down to 1 (matvec.comp); the result is stored in the output type.
struct WorkgroupMatvec {
  uint32_t rows = 0, k = 0, k_lanes = 1;
  uint32_t mat_operand = 0;
  int64_t mat_row = 0, mat_k = 0, vec_k = 0;
  // Batched products: batch b reads the operands `b * mat_batch` and `b * vec_batch` further.
  uint32_t batch = 1;
  int64_t mat_batch = 0, vec_batch = 0;
  AccType acc = AccType::F32;
  std::string mac;  // MAC(acc, a, b) as the eager kernel defines it
};

// The product as above (each batch item's, where it has batch axes), or nullopt with `why` set
// where its eager kernel sums otherwise (a matrix product, split-K, the host BLAS, complex types).
std::optional<WorkgroupMatvec> workgroup_matvec(Device& device, const DotAttrs& attrs, const TensorSpec& left,
                                                const TensorSpec& right, DType out, std::string& why);

}  // namespace nxv
