// Cold compile time of elementwise kernels: GLSL -> SPIR-V through compile_glsl (shaderc at
// optimisation level performance, what KernelCache runs on a miss), with no cache, for a
// representative set of variants: every unary math op in f32 and f64, add/multiply/divide/pow
// on f32, f16, bf16, s32 and c64, complex math, comparisons and as_type pairs.
//
// Each variant's exact key (its defines as make_key builds them) is taken from one run of the
// op on a device of its own with NX_VULKAN_CACHE_DIR set to a fresh directory: KernelCache
// stores each kernel's key text with its SPIR-V there. That run also gives first_call_ms, the
// first run_op (compile, pipeline creation, dispatch, wait) less a second one; for the
// driver's part to be cold too, run with MESA_SHADER_CACHE_DISABLE=true on Mesa drivers.
// Reported per variant: compile_ms and compile_cpu_ms (medians of the iterations' wall and
// thread CPU times), spirv_words, first_call_ms and first_call_cpu_ms (the process's CPU
// time, steadier on a loaded machine; lavapipe compiles on its queue thread); at exit, the median, minimum and maximum of
// both over the variants run.
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/settings.hpp"
#include "kernels/disk_cache.hpp"
#include "kernels/kernel_cache.hpp"
#include "nxv/device.hpp"
#include "nxv/ops.hpp"

namespace nxv::bench {
namespace {

namespace fs = std::filesystem;

struct Variant {
  std::string op;
  DType out;
  std::vector<DType> in;
};

std::string variant_name(const Variant& v) {
  std::string s = v.op;
  for (DType t : v.in) s += std::string("_") + std::string(dtype_name(t));
  return s + "_to_" + std::string(dtype_name(v.out));
}

// Parses KernelCache's disk entry (kernel_cache.cpp, spirv_for and key_text): magic, u64
// length, then the key text "shaderc:<env>\n<name>\n<define>=<value>\n...--\n<sources>".
std::optional<KernelKey> key_from_cache_entry(const fs::path& path) {
  auto data = read_file(path);
  if (!data || data->size() < 16 || std::memcmp(data->data(), "NXVSPV1\n", 8) != 0) return std::nullopt;
  uint64_t len = 0;
  std::memcpy(&len, data->data() + 8, 8);
  if (16 + len > data->size()) return std::nullopt;
  std::istringstream text(std::string(data->data() + 16, len));
  KernelKey key;
  std::string line;
  if (!std::getline(text, line) || !line.starts_with("shaderc:") || !std::getline(text, key.name)) return std::nullopt;
  while (std::getline(text, line) && line != "--") {
    size_t eq = line.find('=');  // define names hold no '='; values may
    if (eq == std::string::npos) return std::nullopt;
    key.defines.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return key;
}

struct Captured {
  KernelKey key;
  double first_call_ms = 0;
  double first_call_cpu_ms = 0;  // the process's CPU time: the driver may compile on threads of its own
};

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// Runs the variant once on a device of its own with a fresh cache directory and reads the
// key back. Empty when the device lacks the variant's types.
std::optional<Captured> capture(const Variant& v, std::string& error) {
  static std::shared_ptr<Device> dev = [] {
    // One op first, not cached anywhere, so that no variant's first call pays the device's
    // own first-use costs.
    auto d = Device::open();
    ScopedSettings no_disk_cache([](Settings& s) { s.cache_dir.clear(); });
    run_op(*d, "bitwise_not", {DType::U32, {4096}}, {empty(*d, DType::U32, {4096})});
    d->synchronize();
    return d;
  }();
  if (!supports_op(*dev, v.op, {v.out, {4096}}, v.in)) {
    error = "not supported on this device";
    return std::nullopt;
  }
  static int serial = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("nxv-compile-bench-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  fs::remove_all(dir);
  std::optional<ScopedSettings> fresh_cache(std::in_place, [&](Settings& s) { s.cache_dir = dir.string(); });
  std::vector<Tensor> inputs;
  for (DType t : v.in) inputs.push_back(empty(*dev, t, {4096}));
  double cpu = 0;
  auto timed_call = [&] {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = process_cpu_ms();
    run_op(*dev, v.op, {v.out, {4096}}, inputs);
    dev->synchronize();
    cpu = process_cpu_ms() - c0;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  double first = timed_call();
  double first_cpu = cpu;
  double second = timed_call();
  fresh_cache.reset();
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "spirv", ec))
    if (e.path().extension() == ".spv") entries.push_back(e.path());
  std::optional<Captured> out;
  if (entries.size() != 1) error = "expected one new kernel in the cache, found " + std::to_string(entries.size());
  else if (auto key = key_from_cache_entry(entries[0])) out = Captured{*key, first - second, first_cpu - cpu};
  else error = "could not read the kernel key from " + entries[0].string();
  fs::remove_all(dir, ec);
  return out;
}

// This thread's CPU time: on a loaded machine, steadier than wall time.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

// Never destroyed: the summary below reads them when static objects are destroyed.
std::vector<double>& medians() {
  static auto* m = new std::vector<double>;
  return *m;
}
std::vector<double>& cpu_medians() {
  static auto* m = new std::vector<double>;
  return *m;
}

// Prints the summary over the variants when the program ends.
struct Summary {
  ~Summary() {
    auto print = [](const char* what, std::vector<double> m) {
      if (m.empty()) return;
      std::sort(m.begin(), m.end());
      std::fprintf(stderr, "compile_glsl cold, %zu elementwise variants, %s: median %.1f ms, min %.1f ms, max %.1f ms\n",
                   m.size(), what, m[m.size() / 2], m.front(), m.back());
    };
    print("wall time", medians());
    print("thread CPU time", cpu_medians());
  }
} summary;

void BM_CompileElementwise(benchmark::State& state, const Variant& v) {
  // Once per variant: the key device keeps the kernel, so a second run would find no new one.
  static std::map<std::string, std::pair<std::optional<Captured>, std::string>> captures;
  auto it = captures.find(variant_name(v));
  if (it == captures.end()) {
    std::string error;
    auto c = capture(v, error);
    it = captures.emplace(variant_name(v), std::make_pair(std::move(c), error)).first;
  }
  const auto& [captured, error] = it->second;
  if (!captured) {
    state.SkipWithError(error.c_str());
    for (auto _ : state) {
    }
    return;
  }
  std::vector<double> times, cpu_times;
  size_t words = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = thread_cpu_ms();
    auto spirv = compile_glsl(captured->key);
    double c1 = thread_cpu_ms();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    times.push_back(s * 1e3);
    cpu_times.push_back(c1 - c0);
    words = spirv.size();
    benchmark::DoNotOptimize(spirv.data());
  }
  auto median_of = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double median = median_of(times), cpu_median = median_of(cpu_times);
  medians().push_back(median);
  cpu_medians().push_back(cpu_median);
  state.counters["compile_ms"] = median;
  state.counters["compile_cpu_ms"] = cpu_median;
  state.counters["spirv_words"] = double(words);
  state.counters["first_call_ms"] = captured->first_call_ms;
  state.counters["first_call_cpu_ms"] = captured->first_call_cpu_ms;
}

std::vector<Variant> variants() {
  using enum DType;
  std::vector<Variant> v;
  for (const char* op : {"exp", "expm1", "log", "log1p", "sigmoid", "cos", "sin", "tan", "cosh", "sinh", "tanh", "acos",
                         "asin", "atan", "acosh", "asinh", "atanh", "sqrt", "rsqrt", "cbrt", "erf", "erfc", "erf_inv"})
    for (DType t : {F32, F64}) v.push_back({op, t, {t}});
  for (const char* op : {"add", "multiply", "divide", "pow"}) {
    for (DType t : {F32, F16, BF16, S32, C64}) {
      DType out = std::string_view(op) == "divide" && t == S32 ? F32 : t;  // Nx divides integers into floats
      v.push_back({op, out, {t, t}});
    }
  }
  for (const char* op : {"negate", "abs", "max", "atan2", "remainder", "equal", "less"}) {
    bool binary = std::string_view(op) != "negate" && std::string_view(op) != "abs";
    bool compare = std::string_view(op) == "equal" || std::string_view(op) == "less";
    v.push_back({op, compare ? U8 : F32, binary ? std::vector<DType>{F32, F32} : std::vector<DType>{F32}});
  }
  for (const char* op : {"exp", "sin", "log", "sqrt"}) v.push_back({op, C64, {C64}});
  v.push_back({"less", U8, {S64, F64}});  // exact integer-float comparison (nxv_order)
  v.push_back({"select", F32, {U8, F32, F32}});
  v.push_back({"sin", F32, {S32}});
  v.push_back({"exp", BF16, {BF16}});
  v.push_back({"tanh", F16, {F16}});
  v.push_back({"sin", F8, {F8}});
  const std::pair<DType, DType> casts[] = {{F32, S32}, {S32, F32}, {F32, BF16}, {F32, F16}, {F64, F32}, {F32, U8},
                                           {F16, F32}, {BF16, F32}, {F32, F8}, {F32, F8E4M3FN}, {F64, S64},
                                           {C64, F32}, {F32, C64}, {U8, F32}};
  for (auto [from, to] : casts) v.push_back({"as_type", to, {from}});
  return v;
}

[[maybe_unused]] const int registered = [] {
  for (const Variant& v : variants())
    benchmark::RegisterBenchmark(("BM_CompileElementwise/" + variant_name(v)).c_str(), BM_CompileElementwise, v)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5);
  return 0;
}();

}  // namespace
}  // namespace nxv::bench
