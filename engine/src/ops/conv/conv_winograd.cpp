#include "ops/conv/conv_winograd.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/conv/conv_winograd_push.h"
#include "ops/dot/dot_kernels.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;
constexpr int64_t kMaxIndex = int64_t(1) << 31;
// Device memory the transformed input and the products take at most, each (batch items in
// chunks beyond it); tuning's conv.winograd_budget (bytes) overrides it (tests).
constexpr uint64_t kChunkBudget = uint64_t(256) << 20;

uint64_t chunk_budget() { return tuning().conv.winograd_budget.value_or(kChunkBudget); }
// Below these the direct GEMM is as fast (64 channels and filters: even on an H100).
constexpr int64_t kMinChannels = 64, kMinFilters = 64;

enum Pass : uint32_t { kFilterPass = 0, kInputPass = 1, kOutputPass = 2 };

// A variant of conv_winograd.comp: one of its passes on f32 or f64.
struct WinogradVariant {
  static constexpr const char* kTemplate = "conv_winograd";
  DType type = DType::F32;
  Pass pass = kFilterPass;

  auto fields() const { return std::tie(type, pass); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kWorkgroupSize;
    auto& d = key.defines;
    AccType wt = type == DType::F64 ? AccType::F64 : AccType::F32;
    const std::string t = glsl_name(wt);
    fold_features({type}, wt).add_defines(d);
    d.emplace_back("PASS", std::to_string(uint32_t(pass)));
    d.emplace_back("WT", t);
    d.emplace_back("WT_F64", type == DType::F64 ? "1" : "0");
    d.emplace_back("WT_ALIGN", std::to_string(dtype_size(type)));
    d.emplace_back("WG", std::to_string(kWorkgroupSize) + "u");
    if (pass == kOutputPass) {
      d.emplace_back("ACC", t);
      add_buffer_defines(d, "OUT", type);
      d.emplace_back("STORE_OUT(v)", glsl_store(type));
    }
    append_glsl_use_defines(d);
    return key;
  }

  static std::vector<WinogradVariant> declared(const DeviceInfo&) {
    std::vector<WinogradVariant> all;
    for (DType type : {DType::F32, DType::F64})
      for (Pass pass : {kFilterPass, kInputPass, kOutputPass}) all.push_back({type, pass});
    return all;
  }
};

// The pass's kernel; the last pass stores through the epilogue where there is one.
const Kernel& winograd_kernel(DeviceImpl& impl, DType type, Pass pass, const StoreEpilogue* epi) {
  return *epilogue_kernel(impl.kernels, WinogradVariant{type, pass}, pass == kOutputPass ? epi : nullptr);
}

void launch_pass(DeviceImpl& impl, LaunchBuilder& builder, DType type, Pass pass, uint64_t invocations,
                 const WinogradParams& params, BufferRef src, BufferRef dst, BufferRef in = {}, BufferRef ker = {},
                 const StoreEpilogue* epi = nullptr) {
  const Kernel& kernel = winograd_kernel(impl, type, pass, epi);
  uint64_t groups = std::max<uint64_t>(1, (invocations + kWorkgroupSize - 1) / kWorkgroupSize);
  groups = std::min<uint64_t>(groups, impl.core->info().max_workgroup_count[0]);
  std::vector<AddressPatch> addresses{{offsetof(WinogradPush, src_addr), src}, {offsetof(WinogradPush, dst_addr), dst}};
  if (pass == kOutputPass) {
    addresses.push_back({offsetof(WinogradPush, in_addr), in});
    addresses.push_back({offsetof(WinogradPush, ker_addr), ker});
  }
  Launch& l = builder.launch(kernel, {uint32_t(groups), 1, 1}, WinogradPush{}, std::move(addresses));
  // The epilogue's block inside the parameters, its tensors' addresses patched there.
  std::vector<AddressPatch> patches;
  WinogradParams block = params;
  if (epi && pass == kOutputPass) {
    std::memcpy(&block.epi, epi->params.data(), sizeof block.epi);
    for (AddressPatch patch : epi->patches) {
      patch.offset += uint32_t(offsetof(WinogradParams, epi));
      patches.push_back(patch);
    }
    use_epilogue_tensors(builder, l, epi);
  }
  builder.params(l, block, offsetof(WinogradPush, params_addr), std::move(patches));
  builder.use(l, src.slot, Access::Read);
  if (pass == kOutputPass) {
    builder.use(l, in.slot, Access::Read);
    builder.use(l, ker.slot, Access::Read);
  }
  builder.use(l, dst.slot, Access::Write);
}

}  // namespace

bool append_conv_winograd(const LowerArgs& a, const ConvPlan& plan, const ConvInput& input, const StoreEpilogue* epi) {
  if (tuning().conv.winograd == Toggle::Off) return false;
  bool forced = tuning().conv.winograd == Toggle::On;
  const ConvGeometry& g = plan.geometry;
  const ConvAttrs& at = plan.attrs;
  const Tensor& kernel_tensor = a.inputs[1].tensor;
  DType type = epi ? epi->product : a.out.type;
  DeviceImpl& impl = a.device.impl();
  const DeviceCore& core = *impl.core;
  if (type != DType::F32 && type != DType::F64) return false;
  if (input.type != type || kernel_tensor.type != type) return false;
  if (g.spatial != 2 || g.kernel_spatial != Shape{3, 3} || g.groups != 1 || g.out_batch != g.batch) return false;
  for (size_t d = 0; d < 2; ++d)
    if (at.strides[d] != 1 || at.input_dilation[d] != 1 || at.kernel_dilation[d] != 1) return false;
  if (a.output.size() == 0 || g.ci == 0) return false;
  int64_t channels = g.ci, filters = g.filters;
  int64_t out_h = g.out_spatial[0], out_w = g.out_spatial[1];
  int64_t tiles_x = (out_w + 1) / 2, tiles_item = (out_h + 1) / 2 * tiles_x;
  // Tiles cut by the output's edges compute outputs nobody stores: at least 2/3 of theirs used
  // (the algorithm's 2.25x fewer multiplications then still save a third).
  bool tiles_used = 3 * out_h * out_w >= 2 * 4 * tiles_item;
  if (!forced && (gemm_cpu_paths(core) || channels < kMinChannels || filters < kMinFilters || !tiles_used))
    return false;
  // Items per chunk: V and M within the budget, one buffer chunk and 31-bit indices.
  size_t elem = dtype_size(type);
  uint64_t per_item = 16 * uint64_t(tiles_item) * uint64_t(std::max(channels, filters));
  uint64_t limit = std::min<uint64_t>({chunk_budget() / elem, core.chunk_bytes() / elem, uint64_t(kMaxIndex - 1)});
  if (per_item > limit || 16 * uint64_t(channels) * uint64_t(filters) > limit) return false;
  // As many items as fit, spread evenly over the chunks that takes.
  int64_t batch = g.batch, most = int64_t(limit / per_item);
  int64_t chunks = (batch + most - 1) / most;
  int64_t items = (batch + chunks - 1) / chunks;

  Tensor kview = transpose_view(kernel_tensor, at.kernel_permutation);  // [filters, channels, 3, 3]
  if (max_element_index(kview.shape, kview.strides, kview.offset) >= kMaxIndex) return false;
  // Channels adjacent in the input: V and M run along channels and filters, else along tiles.
  bool channels_last = input.strides[1] == 1 && channels > 1;

  WinogradParams q{};
  q.channels = uint32_t(channels), q.filters = uint32_t(filters);
  q.tiles_x = uint32_t(tiles_x), q.tiles_item = uint32_t(tiles_item);
  q.in_h = int32_t(g.in_spatial[0]), q.in_w = int32_t(g.in_spatial[1]);
  q.out_h = int32_t(out_h), q.out_w = int32_t(out_w);
  q.pad_y = int32_t(at.padding[0].first), q.pad_x = int32_t(at.padding[1].first);
  q.in_n = int32_t(input.strides[0]), q.in_c = int32_t(input.strides[1]);
  q.in_y = int32_t(input.strides[2]), q.in_x = int32_t(input.strides[3]);
  q.k_o = int32_t(kview.strides[0]), q.k_c = int32_t(kview.strides[1]);
  q.k_y = int32_t(kview.strides[2]), q.k_x = int32_t(kview.strides[3]);
  std::vector<int64_t> os = row_major_strides(a.out.shape);
  const auto& perm = at.output_permutation;
  q.o_n = uint32_t(os[size_t(perm[0])]), q.o_k = uint32_t(os[size_t(perm[1])]);
  q.o_y = uint32_t(os[size_t(perm[2])]), q.o_x = uint32_t(os[size_t(perm[3])]);
  // U: [16][channels][filters] where channels run last in V (B of tiles x channels by
  // channels x filters), else [16][filters][channels] (A of filters x channels by channels x tiles).
  q.u_i = uint32_t(channels * filters);
  q.u_c = channels_last ? uint32_t(filters) : 1u;
  q.u_k = channels_last ? 1u : uint32_t(channels);
  q.channel_fast = channels_last ? 1u : 0u;

  LaunchBuilder& b = a.builder;
  // Where device memory cannot hold the transformed tensors, the direct GEMM (which needs none)
  // takes the conv: nothing is appended before this.
  uint64_t chunk_tiles = uint64_t(items) * uint64_t(tiles_item);
  std::optional<Tensor> u, v, m;
  try {
    u = empty(a.device, type, {16, channels * filters});
    v = empty(a.device, type, {int64_t(16 * chunk_tiles * uint64_t(channels))});
    m = empty(a.device, type, {int64_t(16 * chunk_tiles * uint64_t(filters))});
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::OutOfMemory) return false;
    throw;
  }
  uint32_t u_slot = b.bind(u->buffer), v_slot = b.bind(v->buffer), m_slot = b.bind(m->buffer);
  BufferRef kernel_ref{a.inputs[1].slot, uint64_t(kview.offset) * elem};
  launch_pass(impl, b, type, kFilterPass, uint64_t(channels * filters), q, kernel_ref, {u_slot, 0});

  for (int64_t first = 0; first < batch; first += items) {
    int64_t count = std::min(items, batch - first);
    uint64_t tiles = uint64_t(count) * uint64_t(tiles_item);
    WinogradParams c = q;
    c.tiles = uint32_t(tiles);
    if (channels_last) {
      c.v_i = uint32_t(tiles * channels), c.v_p = uint32_t(channels), c.v_c = 1;
      c.m_i = uint32_t(tiles * filters), c.m_p = uint32_t(filters), c.m_k = 1;
    } else {
      c.v_i = uint32_t(tiles * channels), c.v_p = 1, c.v_c = uint32_t(tiles);
      c.m_i = uint32_t(tiles * filters), c.m_p = 1, c.m_k = uint32_t(tiles);
    }
    BufferRef in_ref{input.ref.slot, input.ref.byte_offset + uint64_t(first * input.strides[0]) * elem};
    c.item0 = uint32_t(first);
    launch_pass(impl, b, type, kInputPass, tiles * uint64_t(channels), c, in_ref, {v_slot, 0});
    if (channels_last) {  // M [16][tiles][filters] = V [16][tiles][channels] x U [16][channels][filters]
      GemmOperand vs{{v_slot, 0}, type, {int64_t(c.v_i), channels, 1}};
      GemmOperand us{{u_slot, 0}, type, {int64_t(q.u_i), filters, 1}};
      append_gemm(impl, b, type, GemmShape{16, int64_t(tiles), filters, channels}, vs, us, {m_slot, 0});
    } else {  // M [16][filters][tiles] = U [16][filters][channels] x V [16][channels][tiles]
      GemmOperand us{{u_slot, 0}, type, {int64_t(q.u_i), channels, 1}};
      GemmOperand vs{{v_slot, 0}, type, {int64_t(c.v_i), int64_t(tiles), 1}};
      append_gemm(impl, b, type, GemmShape{16, filters, int64_t(tiles), channels}, us, vs, {m_slot, 0});
    }
    launch_pass(impl, b, type, kOutputPass, tiles * uint64_t(filters), c, {m_slot, 0}, {a.output_slot, 0}, in_ref,
                kernel_ref, epi);
  }
  return true;
}

void declare_winograd_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<WinogradVariant>(out, info);
}

}  // namespace nxv
