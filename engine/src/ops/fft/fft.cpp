// The fft family: fft and ifft along one axis, Nx's padding or truncation to the transform's
// length included, in double (c64 rows of a power of two from kFloatMin in float, in shared
// memory, fft_pow2_f32.comp): rows of power-of-two length by the radix-2 transform, a
// workgroup per row in shared memory where they fit (fft_pow2.comp), else the first stages by
// blocks in shared memory and a launch per further stage through a work buffer
// (fft_global.comp; NXV_FFT_GLOBAL=1 takes it, every stage a launch, for every power of two);
// other lengths from 256 by Bluestein's algorithm on power-of-two transforms
// (fft_bluestein.comp with fft_global.comp's butterflies; NXV_FFT_BLUESTEIN=1 takes it from 3),
// shorter ones as a direct DFT, one output element per invocation (dft.comp; NXV_FFT_DFT=1
// takes it for every length). Any layout of the input. Devices without f64 leave it to the host.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "ops/family.hpp"
#include "ops/fft/fft_push.h"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 64;     // dft.comp
constexpr uint32_t kRadix2Workgroup = 256;  // fft_pow2.comp, fft_global.comp, fft_bluestein.comp
constexpr uint64_t kBluesteinMin = 256;     // shorter rows of other lengths: the direct DFT

struct FftAttrs {
  int64_t length = 0;
  int64_t axis = 0;
  double eps = 0;
};

bool complex_type(DType t) { return t == DType::C64 || t == DType::C128; }
// Inputs: complex, or any real type (read as x + 0i: Nx hands real and integer tensors over as
// they are); f8 stays on the host.
bool input_type(DType t) { return t != DType::F8 && t != DType::F8E4M3FN; }

Support invalid(std::string why) { return not_native(std::move(why), ErrorKind::InvalidArgument); }

// The largest element index of a view, or -1 where it is empty.
int64_t last_index(const TensorSpec& t) {
  int64_t last = t.offset;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0) return -1;
    last += (t.shape[d] - 1) * t.strides[d];
  }
  return last;
}

// The longest power-of-two row a workgroup transforms in shared memory (fft_pow2.comp's
// MAX_N); tuning's fft.shared_max (tests) asks for a smaller one.
uint32_t max_pow2_for(const DeviceInfo& info) {
  uint32_t shared = info.max_shared_memory;
  uint32_t max_pow2 = 1;
  while (uint64_t(max_pow2) * 2 * 16 <= std::min<uint32_t>(shared, 65536)) max_pow2 *= 2;
  const FftTuning& tuned = tuning().fft;
  if (tuned.shared_max) max_pow2 = std::min<uint32_t>(max_pow2, std::max<uint32_t>(2, std::bit_floor(*tuned.shared_max)));
  return max_pow2;
}

// The longest row fft_pow2_f32.comp holds: MAX_N complex floats (with one slot of padding per
// 16), MAX_N / 4 twiddles (one per 32) and two batches' row starts.
uint32_t max_pow2_f32_for(const DeviceInfo& info) {
  auto bytes = [](uint64_t m) { return 8 * (m + m / 16 + m / 4 + m / 128 + 1) + 16 * (m / 64 + 1); };
  uint32_t max_pow2 = 1;
  while (bytes(uint64_t(max_pow2) * 2) <= std::min<uint32_t>(info.max_shared_memory, 65536)) max_pow2 *= 2;
  const FftTuning& tuned = tuning().fft;
  if (tuned.shared_max) max_pow2 = std::min<uint32_t>(max_pow2, std::max<uint32_t>(2, std::bit_floor(*tuned.shared_max)));
  return max_pow2;
}

// c64 rows from this length run in float (fft_pow2_f32.comp) where they fit: shorter rows cost
// a launch either way, and keep the double transform's bits (Nx.BinaryBackend's, rounded).
constexpr uint64_t kFloatMin = 64;

// Inputs the float transform reads without losing more than its own rounding: c64, and real
// types a float holds exactly.
bool float_input(DType t) {
  return t == DType::C64 || t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::U8 ||
         t == DType::S8 || t == DType::U16 || t == DType::S16;
}

// Whether a transform of rows of n into `out` from `in` runs in float on this device.
bool runs_in_float(DType out, DType in, uint64_t n, const DeviceInfo& info) {
  return out == DType::C64 && float_input(in) && n >= kFloatMin && (n & (n - 1)) == 0 &&
         n <= max_pow2_f32_for(info) && !tuning().fft.c64_in_double && !tuning().fft.dft && !tuning().fft.global;
}

// Rows of a power of two longer than fft_pow2_f32.comp holds run in float as n1 x n2 (each
// from kFloatMin to its MAX_N): the columns' transforms times the row's twiddles, then the
// rows' (two launches). Returns n1, or 0 where they do not (rows padded or truncated, a rank
// with no dimension to spare, the settings that ask for double).
uint64_t long_rows_in_float(DType out, DType in, uint64_t n, int64_t in_extent, size_t rank, const DeviceInfo& info) {
  uint64_t max_n = max_pow2_f32_for(info), n1 = std::max<uint64_t>(kFloatMin, n / max_n);
  bool fits = out == DType::C64 && float_input(in) && (n & (n - 1)) == 0 && n > max_n && n1 <= max_n &&
              n / n1 >= kFloatMin && n / n1 <= max_n && in_extent == int64_t(n) && rank < NXV_FFT_MAX_RANK;
  return fits && !tuning().fft.c64_in_double && !tuning().fft.dft && !tuning().fft.global ? n1 : 0;
}

// The source every fft template shares: the types, MAX_N (read by fft_pow2.comp only, defined
// for each) and the pass (`pass` as PASS).
KernelKey fft_source(const char* name, uint32_t workgroup, DType out, DType in, uint32_t max_pow2, uint32_t pass,
                   bool blocks) {
  KernelKey key;
  key.name = name;
  key.workgroup_size = workgroup;
  auto& d = key.defines;
  fold_features({out, in}, AccType::F64).add_defines(d);
  add_buffer_defines(d, "OUT", out);
  d.emplace_back("IN_COMPLEX", complex_type(in) ? "1" : "0");
  if (complex_type(in)) {
    d.emplace_back("IN_STORE", in == DType::C128 ? "dvec2" : "vec2");
    d.emplace_back("IN_ALIGN", std::to_string(dtype_size(in)));
  } else {
    add_buffer_defines(d, "IN", in);
    d.emplace_back("LOAD_IN(x)", glsl_load(in, AccType::F64));
  }
  d.emplace_back("MAX_N", std::to_string(max_pow2) + "u");
  d.emplace_back("WG", std::to_string(workgroup) + "u");
  d.emplace_back("PASS", std::to_string(pass));
  d.emplace_back("BLOCKS", blocks ? "1" : "0");
  append_glsl_use_defines(d);
  return key;
}

// Every (output, input) pair the family takes, each with the device's MAX_N.
template <typename V, typename Add>
std::vector<V> fft_declared(const DeviceInfo& info, Add add) {
  std::vector<V> all;
  uint32_t max_pow2 = max_pow2_for(info);
  for (DType out : {DType::C64, DType::C128})
    for (DType in : kAllDTypes)
      if (input_type(in)) add(all, out, in, max_pow2);
  return all;
}

// dft.comp: one output element per invocation.
struct DftVariant {
  static constexpr const char* kTemplate = "dft";
  DType out = DType::C64, in = DType::C64;
  uint32_t max_pow2 = 2;  // MAX_N

  auto fields() const { return std::tie(out, in, max_pow2); }
  KernelKey source() const { return fft_source(kTemplate, kWorkgroupSize, out, in, max_pow2, 4, false); }
  static std::vector<DftVariant> declared(const DeviceInfo& info) {
    return fft_declared<DftVariant>(info, [](auto& all, DType out, DType in, uint32_t m) {
      all.push_back({out, in, m});
    });
  }
};

// fft_pow2.comp: a workgroup per row in shared memory; with `blocks`, the first stages of
// longer rows by blocks of max_pow2.
struct FftPow2Variant {
  static constexpr const char* kTemplate = "fft_pow2";
  DType out = DType::C64, in = DType::C64;
  uint32_t max_pow2 = 2;
  bool blocks = false;

  auto fields() const { return std::tie(out, in, max_pow2, blocks); }
  KernelKey source() const {
    return fft_source(kTemplate, kRadix2Workgroup, out, in, max_pow2, blocks ? 5 : 3, blocks);
  }
  static std::vector<FftPow2Variant> declared(const DeviceInfo& info) {
    return fft_declared<FftPow2Variant>(info, [](auto& all, DType out, DType in, uint32_t m) {
      for (bool blocks : {false, true}) all.push_back({out, in, m, blocks});
    });
  }
};

// fft_pow2_f32.comp: c64 rows in float, a workgroup per MAX_N elements in shared memory (a row,
// or several short ones), 16 elements an invocation.
struct FftPow2F32Variant {
  static constexpr const char* kTemplate = "fft_pow2_f32";
  DType in = DType::C64;
  uint32_t max_pow2 = 2;
  uint32_t radix = 16;     // the largest pass's, and the elements an invocation holds
  bool long_row = false;  // the first launch of a long row's two (FftParams' twiddles)

  uint32_t per_invocation() const { return std::min<uint32_t>(radix, max_pow2); }
  uint32_t workgroup() const { return max_pow2 / per_invocation(); }
  auto fields() const { return std::tie(in, max_pow2, radix, long_row); }
  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = workgroup();
    auto& d = key.defines;
    fold_features({DType::C64, in}, AccType::F32).add_defines(d);
    add_buffer_defines(d, "OUT", DType::C64);
    d.emplace_back("IN_COMPLEX", in == DType::C64 ? "1" : "0");
    if (in == DType::C64) {
      d.emplace_back("IN_STORE", "vec2");
      d.emplace_back("IN_ALIGN", "8");
    } else {
      add_buffer_defines(d, "IN", in);
      d.emplace_back("LOAD_IN(x)", glsl_load(in, AccType::F32));
    }
    d.emplace_back("MAX_N", std::to_string(max_pow2) + "u");
    d.emplace_back("PER_INVOCATION", std::to_string(per_invocation()));
    d.emplace_back("LONG_ROW", long_row ? "1" : "0");
    d.emplace_back("WG", std::to_string(workgroup()) + "u");
    append_glsl_use_defines(d);
    return key;
  }
  // The launch's variant on this device (tuning's fft.radix, else 16).
  static FftPow2F32Variant for_device(DType in, const DeviceInfo& info, bool long_row) {
    return {in, max_pow2_f32_for(info), tuning().fft.radix ? tuning().fft.radix : 16, long_row};
  }
  // Up to 512 workgroups (a wave on large GPUs), each computing its twiddles once for its
  // batches of MAX_N / n rows.
  uint32_t groups(const DeviceInfo& info, uint64_t rows, uint64_t n) const {
    uint64_t per_batch = max_pow2 / n, batches = (rows + per_batch - 1) / per_batch;
    return uint32_t(std::min<uint64_t>({batches, info.max_workgroup_count[0], 512}));
  }
  static std::vector<FftPow2F32Variant> declared(const DeviceInfo& info) {
    std::vector<FftPow2F32Variant> all;
    for (DType in : kAllDTypes)
      if (float_input(in))
        for (uint32_t radix : {16u, 8u, 4u})
          for (bool long_row : {false, true}) all.push_back({in, max_pow2_f32_for(info), radix, long_row});
    return all;
  }
};

// fft_global.comp: one radix-2 stage through the work buffer; pass 0 the first (reading the
// input), 1 a middle one, 2 the last (storing the output).
struct FftGlobalVariant {
  static constexpr const char* kTemplate = "fft_global";
  DType out = DType::C64, in = DType::C64;
  uint32_t max_pow2 = 2;
  uint32_t pass = 0;

  auto fields() const { return std::tie(out, in, max_pow2, pass); }
  KernelKey source() const { return fft_source(kTemplate, kRadix2Workgroup, out, in, max_pow2, pass, false); }
  static std::vector<FftGlobalVariant> declared(const DeviceInfo& info) {
    return fft_declared<FftGlobalVariant>(info, [](auto& all, DType out, DType in, uint32_t m) {
      for (uint32_t pass : {0u, 1u, 2u}) all.push_back({out, in, m, pass});
    });
  }
};

// fft_bluestein.comp: its passes 0 (the chirped rows and the filter), 2 (the products) and 3
// (the result); the transforms between are fft_global.comp's middle stages.
struct FftBluesteinVariant {
  static constexpr const char* kTemplate = "fft_bluestein";
  DType out = DType::C64, in = DType::C64;
  uint32_t max_pow2 = 2;
  uint32_t pass = 0;

  auto fields() const { return std::tie(out, in, max_pow2, pass); }
  KernelKey source() const { return fft_source(kTemplate, kRadix2Workgroup, out, in, max_pow2, pass, false); }
  static std::vector<FftBluesteinVariant> declared(const DeviceInfo& info) {
    return fft_declared<FftBluesteinVariant>(info, [](auto& all, DType out, DType in, uint32_t m) {
      for (uint32_t pass : {0u, 2u, 3u}) all.push_back({out, in, m, pass});
    });
  }
};

class FftFamily final : public Family {
 public:
  void declare_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) const override {
    nxv::declare_variants<DftVariant>(out, info);
    nxv::declare_variants<FftPow2Variant>(out, info);
    nxv::declare_variants<FftPow2F32Variant>(out, info);
    nxv::declare_variants<FftGlobalVariant>(out, info);
    nxv::declare_variants<FftBluesteinVariant>(out, info);
  }

  uint32_t support_depends() const override { return kDependsOnShapes | kDependsOnLayouts | kDependsOnAttrs; }

  Attrs decode(OpId, const AttrReader& r) const override {
    FftAttrs a;
    a.length = r.integer("length");
    a.axis = r.integer("axis");
    if (r.has("eps")) {
      AttrNumber e = r.number("eps");
      a.eps = e.kind == AttrNumber::Kind::Float ? e.re : e.kind == AttrNumber::Kind::UInt ? double(e.u) : double(e.i);
    }
    return Attrs::of(a);
  }

  Support check(const CheckArgs& c) const override {
    if (c.attrs.empty()) return invalid("fft needs its options (length, axis)");
    const FftAttrs& a = c.attrs.as<FftAttrs>();
    if (c.inputs.size() != 1) return invalid("fft takes one tensor");
    const TensorSpec& in = c.inputs[0];
    if (!input_type(in.type) || !complex_type(c.out.type))
      return not_native("fft runs natively into c64 and c128 outputs from inputs of every type but f8");
    size_t rank = in.shape.size();
    if (rank == 0 || rank > NXV_FFT_MAX_RANK) return not_native("fft of a tensor of rank 1 to 8");
    if (a.axis < 0 || size_t(a.axis) >= rank) return invalid("option axis: out of range");
    if (a.length < 1) return invalid("option length: expected a positive integer");
    Shape expected = in.shape;
    expected[size_t(a.axis)] = a.length;
    if (c.out.shape != expected) return invalid("the output's shape is the input's with the axis at length");
    const DeviceInfo& info = c.device.impl().core->info();
    if (!c.device.has(kCapFloat64) && !runs_in_float(c.out.type, in.type, uint64_t(a.length), info) &&
        !long_rows_in_float(c.out.type, in.type, uint64_t(a.length), in.shape[size_t(a.axis)], rank, info))
      return not_native("fft computes in double but for c64 rows of a power-of-two length from " +
                        std::to_string(kFloatMin) + " to the longest a workgroup holds: this device has no f64 arithmetic");
    if (shape_size(c.out.shape) >= (int64_t(1) << 31) || last_index(in) >= (int64_t(1) << 31) ||
        a.length >= (int64_t(1) << 31))
      return not_native("fft of tensors over 2^31 elements");
    return {};
  }

  void lower(const LowerArgs& a) const override {
    const FftAttrs& at = a.attrs.as<FftAttrs>();
    const Tensor& in = a.inputs[0].tensor;
    const Tensor& out = a.output;
    uint64_t total = uint64_t(out.size());
    if (total == 0) return;
    // Power-of-two rows take the radix-2 transform: in shared memory where they fit, else
    // through a work buffer; other lengths the DFT.
    const auto& core = *a.device.impl().core;
    uint32_t max_pow2 = max_pow2_for(core.info());
    const FftTuning& tuned = tuning().fft;
    uint64_t n = uint64_t(at.length);
    bool pow2 = n >= 2 && (n & (n - 1)) == 0 && !tuned.dft;
    bool global = pow2 && (n > max_pow2 || tuned.global);
    bool radix2 = pow2 && !global;
    // Other lengths from kBluesteinMin (any with fft.bluestein): Bluestein's algorithm
    // through power-of-two transforms of m >= 2n - 1, where its work buffer fits one chunk.
    uint64_t rows = total / n, m = std::bit_ceil(2 * n - 1), work_entries = (2 * rows + 1) * m;
    bool bluestein = !pow2 && n >= 3 && !tuned.dft && core.info().features.int64 &&
                     (n >= kBluesteinMin || tuned.bluestein) &&
                     work_entries < (uint64_t(1) << 32) && work_entries * 16 <= core.chunk_bytes();
    KernelCache& kernels = a.device.impl().kernels;
    auto global_kernel = [&](uint32_t pass) -> const Kernel& {
      return kernels.get(FftGlobalVariant{out.type, in.type, max_pow2, pass});
    };
    auto bluestein_kernel = [&](uint32_t pass) -> const Kernel& {
      return kernels.get(FftBluesteinVariant{out.type, in.type, max_pow2, pass});
    };
    auto pow2_kernel = [&](bool blocks) -> const Kernel& {
      return kernels.get(FftPow2Variant{out.type, in.type, max_pow2, blocks});
    };
    FftParams params{};
    params.rank = uint32_t(out.shape.size());
    params.axis = uint32_t(at.axis);
    params.n = uint32_t(at.length);
    params.len = uint32_t(std::min<int64_t>(in.shape[size_t(at.axis)], at.length));
    params.inverse = a.op == OpId::ifft ? 1 : 0;
    params.rows = uint32_t(total / n);
    std::memcpy(&params.eps, &at.eps, sizeof params.eps);
    // |x| <= eps for a float x exactly where |x| <= the largest float not above eps.
    float eps32 = float(at.eps);
    if (double(eps32) > at.eps) eps32 = std::nextafter(eps32, 0.0f);
    std::memcpy(&params.eps32, &eps32, sizeof params.eps32);
    for (size_t d = 0; d < out.shape.size(); ++d) {
      params.out_shape[d] = uint32_t(out.shape[d]);
      params.in_stride[d] = uint32_t(in.strides[d]);
    }
    uint64_t e_in = dtype_size(in.type), e_out = dtype_size(out.type);
    uint64_t in_last = uint64_t(std::max<int64_t>(0, last_index(spec_of(in))));
    if (in.size() > 0 && uint64_t(in.offset) * e_in / in.buffer->chunk_bytes() != in_last * e_in / in.buffer->chunk_bytes())
      throw Error(ErrorKind::Unsupported, "fft of a view spanning more than one device buffer chunk");
    if (total * e_out > out.buffer->bytes_left_in_chunk(0) || total > kMaxDispatchElements)
      throw Error(ErrorKind::Unsupported, "fft of an output spanning more than one device buffer chunk");
    // Rows with no input elements (extent 0 along the axis) read nothing: the output is bound.
    BufferRef in_ref = in.size() > 0 ? BufferRef{a.inputs[0].slot, uint64_t(in.offset) * e_in} : BufferRef{a.output_slot, 0};
    auto launch = [&](const Kernel& kernel, uint64_t count, uint32_t groups, uint32_t half_span,
                      std::optional<BufferRef> work, bool reads_input, bool writes_output,
                      const FftParams& p) {
      FftPush push{};
      push.count = uint32_t(count), push.half_span = half_span;
      std::vector<AddressPatch> patches{{offsetof(FftPush, out_addr), {a.output_slot, 0}},
                                        {offsetof(FftPush, in_addr), in_ref}};
      if (work) patches.push_back({offsetof(FftPush, work_addr), *work});
      Launch& l = a.builder.launch(kernel, {groups, 1, 1}, push, std::move(patches));
      a.builder.params(l, p, offsetof(FftPush, params_addr), {});
      if (reads_input && in.size() > 0) a.builder.use(l, a.inputs[0].slot, Access::Read);
      if (work) a.builder.use(l, work->slot, Access::Write);
      if (writes_output) a.builder.use(l, a.output_slot, Access::Write);
    };
    if (bluestein) {
      auto work = a.device.impl().allocate(work_entries * 16);
      BufferRef work_ref{a.builder.bind(work), 0};
      auto groups = [&](uint64_t count) { return workgroups_for(core, count, kRadix2Workgroup); };
      launch(bluestein_kernel(0), (rows + 1) * m, groups((rows + 1) * m), uint32_t(m), work_ref, true, false, params);
      // The transforms of the rows and the filter, then of the products (fft_global.comp's
      // butterflies over rows of m: forward, then inverse, whose 1/m pass 3 applies); passes 2
      // and 3 run their last stages.
      FftParams fwd = params, inv = params;
      fwd.n = inv.n = uint32_t(m);
      fwd.inverse = 0, inv.inverse = 1;
      for (uint64_t half = 1; half < m / 2; half *= 2)
        launch(global_kernel(1), (rows + 1) * m / 2, groups((rows + 1) * m / 2), uint32_t(half), work_ref, false, false,
               fwd);
      launch(bluestein_kernel(2), rows * m / 2, groups(rows * m / 2), uint32_t(m), work_ref, false, false, params);
      BufferRef products{work_ref.slot, (rows + 1) * m * 16};
      for (uint64_t half = 1; half < m / 2; half *= 2)
        launch(global_kernel(1), rows * m / 2, groups(rows * m / 2), uint32_t(half), products, false, false, inv);
      launch(bluestein_kernel(3), total, groups(total), uint32_t(m), work_ref, false, true, params);
      return;
    }
    if (runs_in_float(out.type, in.type, n, core.info())) {
      auto variant = FftPow2F32Variant::for_device(in.type, core.info(), false);
      launch(kernels.get(variant), total, variant.groups(core.info(), rows, n), 0, std::nullopt, true, true, params);
      return;
    }
    if (uint64_t n1 = long_rows_in_float(out.type, in.type, n, in.shape[size_t(at.axis)], out.shape.size(),
                                         core.info())) {
      lower_long_rows(a, params, n1);
      return;
    }
    if (!global) {
      uint32_t groups = radix2 ? uint32_t(std::min<uint64_t>(total / n, core.info().max_workgroup_count[0]))
                               : workgroups_for(core, total, kWorkgroupSize);
      const Kernel& kernel = radix2 ? pow2_kernel(false) : kernels.get(DftVariant{out.type, in.type, max_pow2});
      launch(kernel, total, groups, 0, std::nullopt, true, true, params);
      return;
    }
    auto work = a.device.impl().allocate(total * 16);
    if (total * 16 > work->bytes_left_in_chunk(0))
      throw Error(ErrorKind::Unsupported, "fft of rows whose transform spans more than one device buffer chunk");
    BufferRef work_ref{a.builder.bind(work), 0};
    // Rows longer than shared memory holds: their first log2(max_pow2) stages by blocks in
    // shared memory, the rest a pass each (with NXV_FFT_GLOBAL on shorter rows: every stage).
    uint64_t half = 1;
    if (n > max_pow2) {
      uint64_t units = total / max_pow2;
      launch(pow2_kernel(true), total, uint32_t(std::min<uint64_t>(units, core.info().max_workgroup_count[0])), 0, work_ref,
             true, false, params);
      half = max_pow2;
    } else {
      launch(global_kernel(0), total, workgroups_for(core, total, kRadix2Workgroup), 0, work_ref, true, false, params);
    }
    for (; half < n / 2; half *= 2)
      launch(global_kernel(1), total / 2, workgroups_for(core, total / 2, kRadix2Workgroup), uint32_t(half), work_ref, false,
             false, params);
    // The last stage stores as it goes.
    launch(global_kernel(2), total / 2, workgroups_for(core, total / 2, kRadix2Workgroup), 0, work_ref, false, true, params);
  }

 private:
  // A row of n = n1 n2 as the matrix [n1, n2] (j = j1 n2 + j2): the transforms of its columns
  // (along j1) into a work buffer of the same layout, each result k1 times w_n^(k1 j2); then
  // those of its rows (along j2), result k2 of row k1 stored at k1 + n1 k2. `base` holds the
  // launch's shape, strides, direction and eps.
  static void lower_long_rows(const LowerArgs& a, const FftParams& base, uint64_t n1) {
    const FftAttrs& at = a.attrs.as<FftAttrs>();
    const Tensor& in = a.inputs[0].tensor;
    const Tensor& out = a.output;
    const auto& core = *a.device.impl().core;
    uint64_t total = uint64_t(out.size()), n = uint64_t(at.length), n2 = n / n1;
    size_t axis = size_t(at.axis), rank = out.shape.size();
    auto work = a.device.impl().allocate(total * 8);
    if (total * 8 > work->bytes_left_in_chunk(0))
      throw Error(ErrorKind::Unsupported, "fft of rows whose transform spans more than one device buffer chunk");
    BufferRef work_ref{a.builder.bind(work), 0};
    uint64_t inner = 1;  // the elements of the dimensions after the axis
    for (size_t d = axis + 1; d < rank; ++d) inner *= uint64_t(out.shape[d]);

    // The split shape [.., n1, n2, ..] (the work buffer's, row-major) with the input's strides.
    FftParams columns = base;
    columns.rank = uint32_t(rank + 1);
    for (size_t d = 0, w = 0; d < rank; ++d, ++w) {
      if (d == axis) {
        columns.out_shape[w] = uint32_t(n1), columns.in_stride[w] = uint32_t(in.strides[d] * int64_t(n2));
        ++w;
        columns.out_shape[w] = uint32_t(n2), columns.in_stride[w] = uint32_t(in.strides[d]);
      } else {
        columns.out_shape[w] = uint32_t(out.shape[d]), columns.in_stride[w] = uint32_t(in.strides[d]);
      }
    }
    columns.n = columns.len = uint32_t(n1);
    columns.rows = uint32_t(total / n1);
    float never = -1.0f;  // no component is zeroed between the launches
    std::memcpy(&columns.eps32, &never, sizeof never);
    columns.twiddle_bits = uint32_t(std::countr_zero(n));
    columns.twiddle_inner = uint32_t(inner), columns.twiddle_count = uint32_t(n2);

    // Rows of the work buffer along j2 into [.., n2, n1, ..] (k2 along the axis, then k1):
    // row-major, that is k1 + n1 k2 along the output's axis.
    FftParams rows = base;
    rows.rank = uint32_t(rank + 1);
    uint64_t stride = 1;
    std::vector<uint64_t> work_stride(rank + 1);
    for (size_t w = rank + 1; w-- > 0;) work_stride[w] = stride, stride *= columns.out_shape[w];
    for (size_t w = 0; w <= rank; ++w) rows.out_shape[w] = columns.out_shape[w], rows.in_stride[w] = uint32_t(work_stride[w]);
    rows.out_shape[axis] = uint32_t(n2), rows.in_stride[axis] = uint32_t(work_stride[axis + 1]);
    rows.out_shape[axis + 1] = uint32_t(n1), rows.in_stride[axis + 1] = uint32_t(work_stride[axis]);
    rows.n = rows.len = uint32_t(n2);
    rows.rows = uint32_t(total / n2);

    KernelCache& kernels = a.device.impl().kernels;
    BufferRef in_ref{a.inputs[0].slot, uint64_t(in.offset) * dtype_size(in.type)};
    auto launch = [&](DType from, BufferRef src, uint32_t src_slot, BufferRef dst, uint32_t dst_slot,
                      const FftParams& p, uint64_t length) {
      auto variant = FftPow2F32Variant::for_device(from, core.info(), p.twiddle_bits != 0);
      FftPush push{};
      push.count = uint32_t(total);
      Launch& l = a.builder.launch(kernels.get(variant), {variant.groups(core.info(), total / length, length), 1, 1}, push,
                                   {{offsetof(FftPush, out_addr), dst}, {offsetof(FftPush, in_addr), src}});
      a.builder.params(l, p, offsetof(FftPush, params_addr), {});
      a.builder.use(l, src_slot, Access::Read);
      a.builder.use(l, dst_slot, Access::Write);
    };
    launch(in.type, in_ref, a.inputs[0].slot, work_ref, work_ref.slot, columns, n1);
    launch(DType::C64, work_ref, work_ref.slot, BufferRef{a.output_slot, 0}, a.output_slot, rows, n2);
  }
};

}  // namespace

const Family& fft_family() {
  static const FftFamily family;
  return family;
}

}  // namespace nxv
