#include "device_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "device/device_impl.hpp"
#include "memory/transfer.hpp"
#include "exec/linear_plan.hpp"
#include "nxv/ops.hpp"
#include "nxv/tensor.hpp"

namespace nxv::bench {

Device& device() {
  static std::shared_ptr<Device> d = [] {
    auto dev = Device::open();
    const auto& fc = dev->impl().core->float_controls();
    std::fprintf(stderr, "device: %s (%s, %s); float controls: denorm preserve f32 %d f64 %d, signed zero/inf/nan f32 %d f64 %d\n",
                 dev->info().name.c_str(), dev->info().type.c_str(), dev->info().driver_info.c_str(),
                 fc.denorm_preserve32, fc.denorm_preserve64, fc.signed_zero_inf_nan32, fc.signed_zero_inf_nan64);
    // Which cooperative-matrix shapes the driver lists (whether any takes f64, say).
    std::string shapes;
    for (const auto& c : dev->info().cooperative_matrix_shapes)
      shapes += " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + ":" + c.a_type +
                "*" + c.b_type + "+" + c.c_type + "->" + c.result_type + "(" + c.scope + ")";
    std::fprintf(stderr, "cooperative matrix shapes:%s\n", shapes.empty() ? " none" : shapes.c_str());
    return dev;
  }();
  return *d;
}

int64_t max_elements() {
  if (const char* v = std::getenv("NXV_BENCH_MAX_ELEMENTS")) return std::strtoll(v, nullptr, 0);
  return device().info().type == "cpu" ? (16ll << 20) : (256ll << 20);
}

void warm_up(const std::function<void()>& one, double seconds) {
  auto t0 = std::chrono::steady_clock::now();
  do {
    one();
    device().synchronize();
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
}

double time_copies(uint64_t bytes, int iterations) {
  auto& impl = device().impl();
  auto src = impl.allocate(bytes), dst = impl.allocate(bytes);
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i)
      impl.stream.record([&](Recorder& rec) {
        rec.use(src, Access::Read);
        rec.use(dst, Access::Write);
        record_buffer_copy(rec, *src, 0, *dst, 0, bytes);
      });
    impl.stream.synchronize();
  };
  warm_up([&] { run(1); });
  auto t0 = std::chrono::steady_clock::now();
  run(iterations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

double time_shader_copies(uint64_t bytes, int iterations) {
  // The copy probe kernel (test/probes/copy_probe.comp): 16-byte loads and stores.
  auto& impl = device().impl();
  auto src = impl.allocate(bytes), dst = impl.allocate(bytes);
  const Kernel& kernel = impl.kernels.get({"copy_probe", {}, 256});
  struct {
    uint64_t src, dst;
    uint32_t n;
  } push{src->address_at(0), dst->address_at(0), uint32_t(bytes / 16)};
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i)
      impl.stream.record([&](Recorder& rec) {
        rec.use(src, Access::Read);
        rec.use(dst, Access::Write);
        rec.cmd().bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
        rec.cmd().pushConstants<decltype(push)>(impl.kernels.layout(), vk::ShaderStageFlagBits::eCompute, 0, push);
        rec.cmd().dispatch(workgroups_for(*impl.core, push.n, 256), 1, 1);
        rec.count_command();
      });
    impl.stream.synchronize();
  };
  warm_up([&] { run(1); });
  auto t0 = std::chrono::steady_clock::now();
  run(iterations);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
}

const Limits& limits() {
  static Limits l = [] {
    Limits m;
    uint64_t bytes = uint64_t(max_elements()) * 4;  // the largest f32 tensor the run uses
    // The device's copy bandwidth: the better of the transfer command (a DMA engine on some
    // GPUs) and a copy kernel.
    double best_transfer = 1e30, best_shader = 1e30;
    for (int r = 0; r < 3; ++r) {
      best_transfer = std::min(best_transfer, time_copies(bytes, 10));
      best_shader = std::min(best_shader, time_shader_copies(bytes, 10));
    }
    m.transfer_bytes_per_s = 2.0 * double(bytes) / best_transfer;
    m.shader_copy_bytes_per_s = 2.0 * double(bytes) / best_shader;
    m.copy_bytes_per_s = std::max(m.transfer_bytes_per_s, m.shader_copy_bytes_per_s);
    // Round trip: one 4-byte copy recorded, submitted and waited for.
    auto& impl = device().impl();
    auto a = impl.allocate(4), b = impl.allocate(4);
    auto once = [&] {
      impl.stream.record([&](Recorder& rec) {
        rec.use(a, Access::Read);
        rec.use(b, Access::Write);
        record_buffer_copy(rec, *a, 0, *b, 0, 4);
      });
      impl.stream.synchronize();
    };
    for (int i = 0; i < 20; ++i) once();
    const int n = 500;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) once();
    m.round_trip_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
    std::fprintf(stderr,
                 "device limits: copy %.1f GB/s (read+write, %.0f MiB; vkCmdCopyBuffer %.1f, copy probe kernel %.1f), "
                 "round trip %.1f us\n",
                 m.copy_bytes_per_s / 1e9, double(bytes) / (1 << 20), m.transfer_bytes_per_s / 1e9,
                 m.shader_copy_bytes_per_s / 1e9, m.round_trip_s * 1e6);
    return m;
  }();
  return l;
}

double fma_peak(DType type) {
  static double peaks[2] = {0, 0};
  double& peak = peaks[type == DType::F64 ? 1 : 0];
  if (peak > 0) return peak;
  auto& impl = device().impl();
  bool f64 = type == DType::F64;
  if (f64 && !device().info().features.float64) return peak = 1e30;
  KernelKey key{"fma_probe", {{"T", f64 ? "double" : "float"}}, 256};
  const Kernel& kernel = impl.kernels.get(key);
  bool cpu = device().info().type == "cpu";
  uint32_t groups = cpu ? 16 : 8192, iterations = cpu ? 256 : 1024;
  auto dst = impl.allocate(uint64_t(groups) * 256 * (f64 ? 8 : 4));
  struct {
    uint64_t dst;
    uint32_t iterations;
    float scale;
  } push{dst->address_at(0), iterations, 0.999f};
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i)
      impl.stream.record([&](Recorder& rec) {
        rec.use(dst, Access::Write);
        rec.cmd().bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
        rec.cmd().pushConstants<decltype(push)>(impl.kernels.layout(), vk::ShaderStageFlagBits::eCompute, 0, push);
        rec.cmd().dispatch(groups, 1, 1);
        rec.count_command();
      });
    impl.stream.synchronize();
  };
  warm_up([&] { run(1); });
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run(5);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 5);
  }
  peak = 32.0 * double(iterations) * double(groups) * 256 / best;
  std::fprintf(stderr, "device limits: %s fma rate %.2f TFLOP/s\n", f64 ? "f64" : "f32", peak / 1e12);
  return peak;
}

double max_flop() {
  static const double limit = [] {
    const char* env = std::getenv("NXV_BENCH_MAX_FLOP");
    if (env && *env) return std::strtod(env, nullptr);
    return device().info().type == "cpu" ? 5e9 : 1e16;
  }();
  return limit;
}

Tensor bench_values(Device& dev, DType type, const Shape& shape) {
  int64_t n = shape_size(shape);
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[size_t(i)] = std::sin(float(i % 65521) * 0.618034f);
  Tensor x = from_host(dev, DType::F32, shape, host.data(), host.size() * sizeof(float));
  return type == DType::F32 ? x : run_op(dev, "as_type", {type, shape}, {x});
}

}  // namespace nxv::bench
