// Kernel choices that benchmarks and tests steer: one structured value. Its defaults come from
// the settings (NX_VULKAN_TUNING="dot.splits=3;dot.tile=64,64,16,4,4" and the user settings
// that choose kernels); a test changes it for the calls its thread makes (ScopedTuning),
// never through the environment. Unset fields leave the choice to the family.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxv {

enum class Toggle : uint8_t { Auto, On, Off };

struct DotTuning {
  std::optional<std::array<uint32_t, 5>> tile;          // dot.tile=bm,bn,bk,tm,tn (the tiled kernel)
  std::optional<uint32_t> warp_x;                       // dot.warp_x: invocation columns per subgroup of 32
  bool one_tile = false;                                // dot.one_tile: one tile per workgroup
  std::optional<std::array<uint32_t, 2>> rows;          // dot.rows=tm,tn4 (CPU drivers' row kernel)
  bool no_rows = false;                                 // dot.no_rows
  std::optional<uint32_t> splits;                       // dot.splits: split-K into n parts
  std::optional<uint32_t> slices;                       // dot.slices: k split inside the workgroup (1: never)
  bool no_vec4 = false;                                 // dot.no_vec4: no four-wide shared-memory reads
  bool no_inside = false;                               // dot.no_inside: edge checks everywhere
  Toggle gvec4 = Toggle::Auto;                          // dot.gvec4=0/1: vector loads from global memory
  bool no_wide = false;                                 // dot.no_wide: no 64-bit pair loads (row kernel)
  bool no_coopmat = false;                              // dot.no_coopmat: no cooperative-matrix tier
  bool no_columns = false;                              // dot.no_columns: no matrix-vector product per column
  std::optional<std::array<uint32_t, 5>> coopmat_tile;  // dot.coopmat_tile=bm,bn,bk,wm,wn
  std::optional<std::array<uint32_t, 3>> cpu_tile;      // dot.cpu_tile=tm,tn,wg (CPU drivers' register blocks)
  bool no_cpu_gemm = false;                             // dot.no_cpu_gemm
  std::optional<uint32_t> matvec_lx;                    // dot.matvec_lx: 4, 8, 16 or 32
  std::optional<uint32_t> matvec_vecs;                  // dot.matvec_vecs: 1, 4 or 8
  bool bf16x3 = false;                                  // dot.f32=bf16x3 (NX_VULKAN_DOT_F32)
  bool bf16x3_any = false;                              // dot.bf16x3_any: without tensor cores too
};

struct ConvTuning {
  Toggle winograd = Toggle::Auto;                       // conv.winograd=0/1 (NX_VULKAN_CONV_WINOGRAD)
  std::optional<uint64_t> winograd_budget;              // conv.winograd_budget: bytes
  bool im2col = false;                                  // conv.im2col: through a materialised im2col
  bool no_im2col = false;                               // conv.no_im2col
  bool no_implicit = false;                             // conv.no_implicit
  bool gather_scalar = false;                           // conv.gather_scalar
};

struct FftTuning {
  std::optional<uint32_t> shared_max;                   // fft.shared_max: longest row in shared memory
  bool dft = false;                                     // fft.dft: the direct DFT for every length
  bool global = false;                                  // fft.global: the work buffer for powers of two
  bool bluestein = false;                               // fft.bluestein: Bluestein's from length 3
  bool c64_in_double = false;                           // fft.c64_in_double: c64 rows in double too
  uint32_t radix = 0;                                   // fft.radix: c64 in float, elements an invocation holds
};

struct SortTuning {
  uint32_t radix_items = 0, radix_workgroup = 0;  // sort.radix_items / .radix_workgroup (0: the first that fits)
};

struct TransposeTuning {
  uint32_t tile = 0, rows = 0, vec = 0;                 // transpose.tile / .rows / .vec (0: the family's)
  uint32_t blocks = 0;                                  // transpose.blocks: 1 register blocks, 2 tiles
};

struct Tuning {
  bool gpu_paths = false;        // gpu_paths: a GPU's kernel choices on CPU drivers too (tests)
  Toggle host_blas = Toggle::Auto;  // host_blas=0/1 (NX_VULKAN_HOST_BLAS): products on the host's BLAS
  uint32_t host_threads = 0;     // host_threads (NX_VULKAN_HOST_THREADS): most threads a BLAS product
                                 // is split over; 0: one per CPU the process may run on
  bool one_wide = false;         // ew.one_wide: CPU drivers' dense elementwise one element a trip
  Toggle ew_host = Toggle::Auto;  // ew.host=0/1: CPU drivers' arithmetic chains on the host
  bool no_vec4 = false;          // no_vec4: no four-wide loads in elementwise, reduce and window kernels
  Toggle program_region = Toggle::Auto;  // program.region=0: small programs as a kernel per node, not one
  DotTuning dot;
  ConvTuning conv;
  FftTuning fft;
  SortTuning sort;
  TransposeTuning transpose;

  // Applies "key=value" entries separated by ';' (a bare key sets a flag). Throws
  // InvalidArgument naming an unknown key or a bad value.
  void apply(std::string_view entries);
  // One entry; an empty value puts it back to its default.
  void set(std::string_view key, std::string_view value);
};

// The tuning of the calling thread: its ScopedTuning, else the process's (from the settings).
const Tuning& tuning();

// Changes the calling thread's tuning while it lives; nests.
class ScopedTuning {
 public:
  explicit ScopedTuning(std::string_view entries);
  ScopedTuning(std::string_view key, std::string_view value);
  template <class Change>
  explicit ScopedTuning(Change change) : ScopedTuning(std::string_view{}) {
    change(current_);
  }
  ~ScopedTuning();
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  Tuning current_;
  const Tuning* previous_;
};

}  // namespace nxv
