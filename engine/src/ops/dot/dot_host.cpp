#include "ops/dot/dot_host.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/host_workers.hpp"

namespace nxv {
namespace {

// The CBLAS C interface (cblas.h), declared here so that nothing needs its headers at build
// time: the library is optional and found when the first dot runs.
enum : int { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);
using SetThreads = void (*)(int);

struct HostBlas {
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
};

const HostBlas* load_blas() {
  // OpenBLAS only: a reference BLAS (libblas.so.3) is slower than the driver's kernels.
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"}) {
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) continue;
    static HostBlas blas;
    blas.sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
    blas.dgemm = reinterpret_cast<Dgemm>(dlsym(lib, "cblas_dgemm"));
    if (blas.sgemm && blas.dgemm) {
      // Each call on the calling thread: products are split over the engine's host threads
      // (exec/host_workers.hpp), which sleep when idle, where OpenBLAS's spin on the cores
      // that the CPU driver's next kernels need.
      if (auto set_threads = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"))) set_threads(1);
      return &blas;  // kept loaded for the process's lifetime
    }
    dlclose(lib);
  }
  return nullptr;
}

const HostBlas* host_blas() {
  static const HostBlas* blas = load_blas();
  return blas;
}

// NX_VULKAN_HOST_BLAS: "0" never, "1" every product BLAS can take, unset: products of at
// least kMinMacs multiply-adds. Below that the kernel costs less than waiting for the work
// before it (a small product inside a pipelined training step: the MLP example ran 1.4x
// slower with every product on the host).
constexpr int64_t kMinMacs = int64_t(1) << 18;

bool enabled(const GemmShape& g) {
  Toggle t = tuning().host_blas;
  if (t == Toggle::Off) return false;
  return t == Toggle::On || g.batch * g.m * g.n * g.k >= kMinMacs;
}

// Multiply-adds below which a part is not worth a thread (waking one costs about as long as
// 2^20 multiply-adds take).
constexpr int64_t kMacsPerPart = int64_t(1) << 20;

// The parts a product of `macs` multiply-adds is split into: at most the host's threads, or
// tuning's host_threads.
size_t gemm_parts(int64_t macs) {
  size_t threads = tuning().host_threads ? size_t(tuning().host_threads) : host_parallelism();
  return size_t(std::clamp<int64_t>(macs / kMacsPerPart, 1, int64_t(threads)));
}

// How BLAS reads a rows x cols matrix with strides (rs, cs) in elements: row-major (cs == 1)
// or transposed (rs == 1), with its leading dimension. A stride of a size-1 axis is free.
struct MatrixLayout {
  int trans = kNoTrans;
  int64_t ld = 1;
};

std::optional<MatrixLayout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  int64_t row_ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
  if ((cols == 1 || cs == 1) && row_ld >= std::max<int64_t>(cols, 1)) return MatrixLayout{kNoTrans, row_ld};
  int64_t col_ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
  if ((rows == 1 || rs == 1) && col_ld >= std::max<int64_t>(rows, 1)) return MatrixLayout{kTrans, col_ld};
  return std::nullopt;
}

template <typename T>
T* host_pointer(const Buffer& buffer, BufferRef ref) {
  return reinterpret_cast<T*>(host_address(buffer, ref));
}

// The bytes a batched operand spans from its start: batch 0's matrix to the last batch's.
uint64_t span_bytes(int64_t batch, int64_t rows, int64_t cols, const std::array<int64_t, 3>& s, uint64_t elem) {
  if (batch == 0 || rows == 0 || cols == 0) return 0;
  return uint64_t((batch - 1) * s[0] + (rows - 1) * s[1] + (cols - 1) * s[2] + 1) * elem;
}

}  // namespace

bool host_blas_available() { return host_blas() != nullptr; }

bool host_reachable(const Buffer& buffer, BufferRef ref, uint64_t bytes) {
  const auto& chunks = buffer.chunks();
  uint64_t chunk = ref.byte_offset / buffer.chunk_bytes();
  if (chunk >= chunks.size()) return bytes == 0;
  const BufferChunk& c = chunks[chunk];
  return c.mapped && (c.flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) && buffer.bytes_left_in_chunk(ref.byte_offset) >= bytes;
}

std::byte* host_address(const Buffer& buffer, BufferRef ref) {
  const BufferChunk& c = buffer.chunks()[ref.byte_offset / buffer.chunk_bytes()];
  return reinterpret_cast<std::byte*>(c.mapped + ref.byte_offset % buffer.chunk_bytes());
}

bool host_gemm_candidate(Device& device, DType out, const GemmShape& g, DType a, DType b) {
  if ((out != DType::F32 && out != DType::F64) || a != out || b != out) return false;
  return device.impl().core->profile().cpu_driver && enabled(g) && host_blas();
}

bool append_host_gemm(Device& device, LaunchBuilder& builder, DType out, const GemmShape& g, const GemmOperand& a,
                      const GemmOperand& b, BufferRef c) {
  if (!host_gemm_candidate(device, out, g, a.type, b.type)) return false;
  if (g.m == 0 || g.n == 0 || g.batch == 0) return false;  // nothing to compute
  // A is {batch, m, k}, B is {batch, k, n}; size-1 batches leave their stride free.
  auto la = blas_layout(g.m, g.k, a.strides[1], a.strides[2]);
  auto lb = blas_layout(g.k, g.n, b.strides[1], b.strides[2]);
  if (!la || !lb || a.strides[0] < 0 || b.strides[0] < 0) return false;
  uint64_t elem = dtype_size(out);
  if (!host_reachable(builder.buffer(a.ref.slot), a.ref, span_bytes(g.batch, g.m, g.k, a.strides, elem)) ||
      !host_reachable(builder.buffer(b.ref.slot), b.ref, span_bytes(g.batch, g.k, g.n, b.strides, elem)) ||
      !host_reachable(builder.buffer(c.slot), c, uint64_t(g.batch * g.m * g.n) * elem))
    return false;
  size_t parts = gemm_parts(g.batch * g.m * g.n * g.k);
  auto multiply = [=, la = *la, lb = *lb]<typename T>(std::span<const std::shared_ptr<Buffer>> buffers, auto gemm) {
    const T* pa = host_pointer<const T>(*buffers[a.ref.slot], a.ref);
    const T* pb = host_pointer<const T>(*buffers[b.ref.slot], b.ref);
    T* pc = host_pointer<T>(*buffers[c.slot], c);
    if (g.k == 0) return std::fill(pc, pc + g.batch * g.m * g.n, T(0));
    // C's rows [m0, m1) and columns [n0, n1) of batch item i.
    auto block = [&](int64_t i, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      gemm(kRowMajor, la.trans, lb.trans, int(m1 - m0), int(n1 - n0), int(g.k), T(1),
           pa + i * a.strides[0] + m0 * a.strides[1], int(la.ld), pb + i * b.strides[0] + n0 * b.strides[2],
           int(lb.ld), T(0), pc + (i * g.m + m0) * g.n + n0, int(std::max<int64_t>(g.n, 1)));
    };
    if (parts > 1 && g.batch >= int64_t(parts)) {
      run_host_parts(parts, [&](size_t p) {
        for (int64_t i = g.batch * int64_t(p) / int64_t(parts); i < g.batch * int64_t(p + 1) / int64_t(parts); ++i)
          block(i, 0, g.m, 0, g.n);
      });
      return;
    }
    // Each item split along the longer of m and n, in ranges of whole 16s.
    bool rows = g.m >= g.n;
    int64_t extent = rows ? g.m : g.n;
    int64_t step = ((extent + int64_t(parts) - 1) / int64_t(parts) + 15) / 16 * 16;
    for (int64_t i = 0; i < g.batch; ++i)
      run_host_parts(size_t((extent + step - 1) / step), [&](size_t p) {
        int64_t lo = int64_t(p) * step, hi = std::min(extent, lo + step);
        if (rows) block(i, lo, hi, 0, g.n);
        else block(i, 0, g.m, lo, hi);
      });
  };
  Launch& l = builder.host_step([=](std::span<const std::shared_ptr<Buffer>> buffers) {
    if (out == DType::F32) multiply.operator()<float>(buffers, host_blas()->sgemm);
    else multiply.operator()<double>(buffers, host_blas()->dgemm);
  });
  builder.use(l, a.ref.slot, Access::Read);
  builder.use(l, b.ref.slot, Access::Read);
  builder.use(l, c.slot, Access::Write);
  return true;
}

}  // namespace nxv
