// Mirrors DotFamily::lower's choice of kernel (dot.cpp) for row-major operands.
#include "ops/dot/dot_in_workgroup.hpp"

#include "device/device_impl.hpp"
#include "ops/dot/dot_host.hpp"
#include "ops/dot/dot_kernels.hpp"
#include "ops/dot/dot_rows.hpp"
#include "ops/dot/dot_plan.hpp"

namespace nxv {

std::optional<WorkgroupMatvec> workgroup_matvec(Device& device, const DotAttrs& attrs, const TensorSpec& left,
                                                const TensorSpec& right, DType out, std::string& why) {
  if (attrs.epilogue) return why = "dot: a product with an epilogue", std::nullopt;
  if (is_complex(out)) return why = "dot: a complex product", std::nullopt;
  const DeviceCore& core = *device.impl().core;
  GemmShape g = gemm_shape(left.shape, right.shape, attrs);
  auto a = collapse_groups(left.shape, left.strides, left_axes(left.shape.size(), attrs));
  auto b = collapse_groups(right.shape, right.strides, right_axes(right.shape.size(), attrs));
  if (!a || !b) return why = "dot: an operand its kernel would copy first", std::nullopt;
  if (host_gemm_candidate(device, out, g, left.type, right.type))
    return why = "dot: a product the host BLAS takes", std::nullopt;
  WorkgroupMatvec w;
  w.acc = dot_acc_type(out);
  w.mac = dot_mac(w.acc);
  w.k = uint32_t(g.k);
  w.batch = uint32_t(g.batch);
  GemmOperand mat;
  if (g.m == 1 && g.n > 1) {
    // out[n] = sum_k B[k, n] * A[k]: B's columns are the matrix's rows.
    GemmOperand bop{{0, uint64_t(right.offset) * dtype_size(right.type)}, right.type, *b};
    w.mat_operand = 1, w.rows = uint32_t(g.n);
    w.mat_row = (*b)[2], w.mat_k = (*b)[1], w.vec_k = (*a)[2];
    w.mat_batch = (*b)[0], w.vec_batch = (*a)[0];
    if (rows_kernel_fits(core, g, bop, out)) {
      w.k_lanes = 1;  // gemm_rows.comp: each output sums the whole k in order
      return w;
    }
    mat = {{0, uint64_t(right.offset) * dtype_size(right.type)}, right.type, {(*b)[0], (*b)[2], (*b)[1]}};
  } else if (g.n == 1) {
    w.mat_operand = 0, w.rows = uint32_t(g.m);
    w.mat_row = (*a)[1], w.mat_k = (*a)[2], w.vec_k = (*b)[1];
    w.mat_batch = (*a)[0], w.vec_batch = (*b)[0];
    mat = {{0, uint64_t(left.offset) * dtype_size(left.type)}, left.type, *a};
  } else {
    return why = "dot: a matrix product (" + shape_text(left.shape) + " by " + shape_text(right.shape) + ")", std::nullopt;
  }
  MatvecLanes lanes = matvec_lanes(core, out, w.batch, w.rows, w.k, mat);
  if (lanes.splits > 1) return why = "dot: a product its kernel splits over k", std::nullopt;
  w.k_lanes = lanes.k_lanes();
  return w;
}

}  // namespace nxv
