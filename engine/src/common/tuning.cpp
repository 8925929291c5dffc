#include "common/tuning.hpp"

#include <atomic>
#include <charconv>
#include <memory>
#include <mutex>
#include <vector>

#include "common/errors.hpp"
#include "common/settings.hpp"

namespace nxv {
namespace {

[[noreturn]] void bad(std::string_view key, std::string_view value, std::string_view expected) {
  throw Error(ErrorKind::InvalidArgument,
              "tuning entry " + std::string(key) + "=" + std::string(value) + ": expected " + std::string(expected));
}

template <class T>
T parse_number(std::string_view key, std::string_view value) {
  T n{};
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size()) bad(key, value, "a number");
  return n;
}

template <size_t N>
std::array<uint32_t, N> parse_list(std::string_view key, std::string_view value) {
  std::array<uint32_t, N> out{};
  std::string_view rest = value;
  for (size_t i = 0; i < N; ++i) {
    size_t comma = rest.find(',');
    if ((comma == std::string_view::npos) != (i + 1 == N)) bad(key, value, std::to_string(N) + " numbers");
    out[i] = parse_number<uint32_t>(key, rest.substr(0, comma));
    if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
  }
  return out;
}

bool parse_flag(std::string_view key, std::string_view value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  bad(key, value, "1 or 0");
}

Toggle parse_toggle(std::string_view key, std::string_view value) {
  if (value == "auto") return Toggle::Auto;
  return parse_flag(key, value) ? Toggle::On : Toggle::Off;
}

thread_local const Tuning* t_override = nullptr;

// The process's tuning, parsed again when the settings change (ScopedSettings); earlier ones
// stay alive, as callers may hold references.
std::mutex g_mutex;
std::vector<std::unique_ptr<const Tuning>> g_parsed;
std::atomic<const Tuning*> g_current{nullptr};
std::atomic<uint64_t> g_generation{~uint64_t(0)};

const Tuning& process_tuning() {
  uint64_t generation = settings_generation();
  const Tuning* t = g_current.load(std::memory_order_acquire);
  if (t && g_generation.load(std::memory_order_acquire) == generation) return *t;
  std::lock_guard lock(g_mutex);
  auto parsed = std::make_unique<Tuning>();
  parsed->apply(settings()->tuning);
  g_parsed.push_back(std::move(parsed));
  g_current.store(g_parsed.back().get(), std::memory_order_release);
  g_generation.store(generation, std::memory_order_release);
  return *g_parsed.back();
}

}  // namespace

void Tuning::set(std::string_view key, std::string_view v) {
  // An empty value puts the entry back to its default (every default is the zero value).
#define NXV_ENTRY(name, member, parsed)        \
  if (key == name) {                            \
    member = v.empty() ? decltype(member){} : parsed; \
    return;                                     \
  }
  auto flag = [&] { return parse_flag(key, v); };
  auto toggle = [&] { return parse_toggle(key, v); };
  auto u32 = [&] { return parse_number<uint32_t>(key, v); };
  auto u64 = [&] { return parse_number<uint64_t>(key, v); };
  NXV_ENTRY("gpu_paths", gpu_paths, flag())
  NXV_ENTRY("host_blas", host_blas, toggle())
  NXV_ENTRY("host_threads", host_threads, u32())
  NXV_ENTRY("no_vec4", no_vec4, flag())
  NXV_ENTRY("ew.one_wide", one_wide, flag())
  NXV_ENTRY("ew.host", ew_host, toggle())
  NXV_ENTRY("program.region", program_region, toggle())
  NXV_ENTRY("dot.tile", dot.tile, (parse_list<5>(key, v)))
  NXV_ENTRY("dot.warp_x", dot.warp_x, u32())
  NXV_ENTRY("dot.one_tile", dot.one_tile, flag())
  NXV_ENTRY("dot.rows", dot.rows, (parse_list<2>(key, v)))
  NXV_ENTRY("dot.no_rows", dot.no_rows, flag())
  NXV_ENTRY("dot.splits", dot.splits, u32())
  NXV_ENTRY("dot.slices", dot.slices, u32())
  NXV_ENTRY("dot.no_vec4", dot.no_vec4, flag())
  NXV_ENTRY("dot.no_inside", dot.no_inside, flag())
  NXV_ENTRY("dot.gvec4", dot.gvec4, toggle())
  NXV_ENTRY("dot.no_wide", dot.no_wide, flag())
  NXV_ENTRY("dot.no_coopmat", dot.no_coopmat, flag())
  NXV_ENTRY("dot.no_columns", dot.no_columns, flag())
  NXV_ENTRY("dot.coopmat_tile", dot.coopmat_tile, (parse_list<5>(key, v)))
  NXV_ENTRY("dot.cpu_tile", dot.cpu_tile, (parse_list<3>(key, v)))
  NXV_ENTRY("dot.no_cpu_gemm", dot.no_cpu_gemm, flag())
  NXV_ENTRY("dot.matvec_lx", dot.matvec_lx, u32())
  NXV_ENTRY("dot.matvec_vecs", dot.matvec_vecs, u32())
  NXV_ENTRY("dot.f32", dot.bf16x3, v == "bf16x3" ? true : v == "f32" ? false : (bad(key, v, "bf16x3 or f32"), false))
  NXV_ENTRY("dot.bf16x3_any", dot.bf16x3_any, flag())
  NXV_ENTRY("conv.winograd", conv.winograd, toggle())
  NXV_ENTRY("conv.winograd_budget", conv.winograd_budget, u64())
  NXV_ENTRY("conv.im2col", conv.im2col, flag())
  NXV_ENTRY("conv.no_im2col", conv.no_im2col, flag())
  NXV_ENTRY("conv.no_implicit", conv.no_implicit, flag())
  NXV_ENTRY("conv.gather_scalar", conv.gather_scalar, flag())
  NXV_ENTRY("fft.shared_max", fft.shared_max, u32())
  NXV_ENTRY("fft.dft", fft.dft, flag())
  NXV_ENTRY("fft.global", fft.global, flag())
  NXV_ENTRY("fft.bluestein", fft.bluestein, flag())
  NXV_ENTRY("fft.c64_in_double", fft.c64_in_double, flag())
  NXV_ENTRY("fft.radix", fft.radix, v == "16" ? 16u : v == "8" ? 8u : v == "4" ? 4u : (bad(key, v, "16, 8 or 4"), 0u))
  NXV_ENTRY("sort.radix_items", sort.radix_items, u32())
  NXV_ENTRY("sort.radix_workgroup", sort.radix_workgroup, u32())
  NXV_ENTRY("transpose.tile", transpose.tile, u32())
  NXV_ENTRY("transpose.rows", transpose.rows, u32())
  NXV_ENTRY("transpose.vec", transpose.vec, u32())
  NXV_ENTRY("transpose.blocks", transpose.blocks, u32())
#undef NXV_ENTRY
  throw Error(ErrorKind::InvalidArgument, "unknown tuning entry '" + std::string(key) + "'");
}

void Tuning::apply(std::string_view entries) {
  while (!entries.empty()) {
    size_t end = entries.find(';');
    std::string_view entry = entries.substr(0, end);
    entries.remove_prefix(end == std::string_view::npos ? entries.size() : end + 1);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.empty()) continue;
    size_t eq = entry.find('=');
    // A bare key sets a flag.
    set(entry.substr(0, eq), eq == std::string_view::npos ? std::string_view("1") : entry.substr(eq + 1));
  }
}

const Tuning& tuning() { return t_override ? *t_override : process_tuning(); }

ScopedTuning::ScopedTuning(std::string_view entries) : current_(tuning()), previous_(t_override) {
  current_.apply(entries);
  t_override = &current_;
}

ScopedTuning::ScopedTuning(std::string_view key, std::string_view value)
    : current_(tuning()), previous_(t_override) {
  current_.set(key, value);
  t_override = &current_;
}

ScopedTuning::~ScopedTuning() {
  // Scopes end in the reverse order of their start (a ScopedTuning held in an optional and
  // reset early would otherwise leave a later one's tuning pointing at freed memory).
  if (t_override != &current_) std::terminate();
  t_override = previous_;
}

}  // namespace nxv
