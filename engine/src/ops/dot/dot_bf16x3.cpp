#include "ops/dot/dot_bf16x3.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "kernels/fast_division.hpp"
#include "ops/dot/dot_coopmat.hpp"
#include "ops/dot/gemm_push.h"

namespace nxv {
namespace {

// A variant of dot_split_bf16x3.comp: which axis of the f32 source its parts triple.
struct SplitBf16x3Variant {
  static constexpr const char* kTemplate = "dot_split_bf16x3";
  int axis = 2;  // 2: A's k (its columns), 1: B's k (its rows)

  auto fields() const { return std::tie(axis); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = 256;
    key.defines.emplace_back("AXIS", std::to_string(axis));
    return key;
  }

  static std::vector<SplitBf16x3Variant> declared(const DeviceInfo&) { return {{2}, {1}}; }
};

// X [batch, rows, cols] (f32, strides) as bf16 parts at `dst`, `axis` tripled.
void append_split(DeviceImpl& impl, LaunchBuilder& builder, const GemmOperand& x, uint32_t batch, uint32_t rows,
                  uint32_t cols, int axis, BufferRef dst) {
  const DeviceCore& core = *impl.core;
  const Kernel& k = impl.kernels.get(SplitBf16x3Variant{axis});
  SplitBf16x3Push push{};
  push.rows = rows, push.cols = cols;
  push.total = batch * rows * cols;
  push.s_batch = uint32_t(x.strides[0]), push.s_row = uint32_t(x.strides[1]), push.s_col = uint32_t(x.strides[2]);
  fast_division(cols, push.cols_magic, push.cols_shift);
  fast_division(rows, push.rows_magic, push.rows_shift);
  Launch& l = builder.launch(k, {workgroups_for(core, push.total, 256), 1, 1}, push,
                             {{offsetof(SplitBf16x3Push, src_addr), x.ref}, {offsetof(SplitBf16x3Push, dst_addr), dst}});
  builder.use(l, x.ref.slot, Access::Read);
  builder.use(l, dst.slot, Access::Write);
}

}  // namespace

bool append_gemm_bf16x3(const LowerArgs& a, DType out, const GemmShape& g, const GemmOperand& A,
                        const GemmOperand& B, BufferRef c, bool has_epilogue) {
  if (!tuning().dot.bf16x3 || has_epilogue) return false;
  if (out != DType::F32 || A.type != DType::F32 || B.type != DType::F32 || g.m < 2 || g.n < 2 || g.k == 0) return false;
  DeviceImpl& impl = a.device.impl();
  const DeviceCore& core = *impl.core;
  const auto& ft = core.info().features;
  if (!ft.storage16 || !ft.int16) return false;
  uint64_t k3 = 3 * uint64_t(g.k);
  uint64_t a_elements = uint64_t(g.batch) * uint64_t(g.m) * k3, b_elements = uint64_t(g.batch) * k3 * uint64_t(g.n);
  // Every index of the parts and of the sources fits 31 bits; each part fits one buffer chunk.
  if (a_elements >= (uint64_t(1) << 31) || b_elements >= (uint64_t(1) << 31) || a_elements * 2 > core.chunk_bytes() ||
      b_elements * 2 > core.chunk_bytes())
    return false;
  GemmShape shape{g.batch, g.m, g.n, int64_t(k3)};
  GemmOperand a_parts{{0, 0}, DType::BF16, {int64_t(uint64_t(g.m) * k3), int64_t(k3), 1}};
  GemmOperand b_parts{{0, 0}, DType::BF16, {int64_t(k3 * uint64_t(g.n)), g.n, 1}};
  bool tensor_cores = coopmat_gemm_tile(core, shape, a_parts, b_parts, out).has_value();
  if (!tensor_cores && !tuning().dot.bf16x3_any) return false;
  Tensor a_buffer = empty(a.device, DType::BF16, {g.batch, g.m, int64_t(k3)});
  Tensor b_buffer = empty(a.device, DType::BF16, {g.batch, int64_t(k3), g.n});
  a_parts.ref = {a.builder.bind(a_buffer.buffer), 0};
  b_parts.ref = {a.builder.bind(b_buffer.buffer), 0};
  append_split(impl, a.builder, A, uint32_t(g.batch), uint32_t(g.m), uint32_t(g.k), 2, a_parts.ref);
  append_split(impl, a.builder, B, uint32_t(g.batch), uint32_t(g.k), uint32_t(g.n), 1, b_parts.ref);
  append_gemm(impl, a.builder, out, shape, a_parts, b_parts, c);
  return true;
}

void declare_split_bf16x3_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<SplitBf16x3Variant>(out, info);
}

}  // namespace nxv
