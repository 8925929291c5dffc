#include "ops/sort/radix.hpp"

#include <algorithm>
#include <array>
#include <numeric>

#include "common/tuning.hpp"
#include "device/device_impl.hpp"
#include "exec/linear_plan.hpp"
#include "memory/copy.hpp"
#include "ops/sort/sort_keys.hpp"
#include "ops/sort/sort_push.h"

namespace nxv {
namespace {

constexpr uint32_t kScanWorkgroup = 256;  // radix_scan's base pass needs one invocation per digit
constexpr uint64_t kSerialScanTiles = 16;
constexpr uint32_t kHistogramTiles = 8;  // radix_histogram's tiles per workgroup

// How radix_scatter runs: its workgroup, rounds per tile, and how it ranks keys: subgroup
// ballots where the device has them and a workgroup's per-subgroup counters fit in shared
// memory, else groups of invocations comparing digits through shared memory. Shared memory
// holds the larger of the counters and the tile's keys (and indices).
struct ScatterConfig {
  uint32_t workgroup = 256;
  uint32_t items = 16;
  uint32_t groups = 8;  // most groups in a workgroup
  uint32_t group = 0;   // match_shared: invocations per group
  bool match_shared = false;
  uint32_t key_words = 1;
  uint32_t shared_words = 0;
  uint32_t tile() const { return workgroup * items; }
  auto fields() const { return std::tie(workgroup, items, groups, group, match_shared, key_words, shared_words); }
};

uint32_t min_subgroup_of(const DeviceInfo& info) {
  return info.min_subgroup_size ? info.min_subgroup_size : info.subgroup_size;
}

// Whether the sort's kernels scan by subgroup arithmetic (radix_scan, radix_scatter's digit starts).
bool subgroup_scans(const DeviceInfo& info) {
  return info.features.subgroup_basic && info.features.subgroup_arithmetic && min_subgroup_of(info) >= 4;
}

ScatterConfig scatter_config(const DeviceInfo& info, size_t key_bytes, bool arg) {
  uint32_t min_subgroup = min_subgroup_of(info);
  uint64_t limit = info.max_shared_memory ? info.max_shared_memory : 16384;
  uint32_t key_words = key_bytes == 8 ? 2 : 1;
  uint32_t words_per_key = key_words + (arg ? 1 : 0);
  bool ballot = subgroup_scans(info) && info.features.subgroup_ballot;
  for (bool shared_match : {false, true}) {
    if (!shared_match && !ballot) continue;
    // Keys alone of 32 bits move faster in tiles of 8 rounds; with indices, 16 (bench/RESULTS.md).
    const std::array<uint32_t, 3> rounds = !arg && key_bytes == 4 ? std::array{8u, 16u, 4u} : std::array{16u, 8u, 4u};
    for (uint32_t wg : {256u, 128u, 64u})
      for (uint32_t items : rounds) {
        if ((tuning().sort.radix_workgroup && wg != tuning().sort.radix_workgroup) ||
            (tuning().sort.radix_items && items != tuning().sort.radix_items))
          continue;
        uint32_t group = shared_match ? std::min<uint32_t>(32, wg) : 0;
        uint32_t groups = shared_match ? wg / group : std::max<uint32_t>(1, wg / min_subgroup);
        uint32_t words = std::max(groups * 256, wg * items * words_per_key);
        uint64_t bytes = 4ull * (words + 3 * 256 + (shared_match ? wg : 64));
        if (bytes <= limit) return {wg, items, groups, group, shared_match, key_words, words};
      }
  }
  throw Error(ErrorKind::Unsupported, "sort: the radix sort's tile does not fit in the device's shared memory");
}

void add_common(KernelKey& key, uint32_t wg, DType in, bool descending, std::optional<DType> index_type) {
  key.workgroup_size = wg;
  auto& d = key.defines;
  sort_features(in, index_type).add_defines(d);
  d.emplace_back("WG", std::to_string(wg));
  add_sort_key_defines(d, in, descending);
}

// The passes of a sort of `key_bytes`-byte keys that differ: (first, last) of the first, a
// middle and the last digit.
std::vector<std::pair<bool, bool>> pass_kinds(size_t key_bytes) {
  if (key_bytes == 1) return {{true, true}};
  if (key_bytes == 2) return {{true, false}, {false, true}};
  return {{true, false}, {false, false}, {false, true}};
}

// radix_histogram.comp: a tile's digit counts.
struct RadixHistogramVariant {
  static constexpr const char* kTemplate = "radix_histogram";
  DType in = DType::F32;
  bool descending = false;

  auto fields() const { return std::tie(in, descending); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    add_common(key, 256, in, descending, std::nullopt);
    key.defines.emplace_back("TILES", std::to_string(kHistogramTiles));
    return key;
  }

  static std::vector<RadixHistogramVariant> declared(const DeviceInfo&) {
    std::vector<RadixHistogramVariant> all;
    for (DType in : kAllDTypes)
      if (sortable(in))
        for (bool descending : {false, true}) all.push_back({in, descending});
    return all;
  }
};

// radix_scan.comp: the counts' prefix sums per row segment (`serial`: an invocation per
// segment), or (`bases`) the digits' bases of each row.
struct RadixScanVariant {
  static constexpr const char* kTemplate = "radix_scan";
  bool bases = false;
  bool serial = false;
  bool subgroups = false;  // scans by subgroup arithmetic

  auto fields() const { return std::tie(bases, serial, subgroups); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    key.workgroup_size = kScanWorkgroup;
    key.defines = {{"WG", std::to_string(kScanWorkgroup)},
                   {"BASES", bases ? "1" : "0"},
                   {"SERIAL", serial ? "1" : "0"},
                   {"SUBGROUPS", subgroups ? "1" : "0"}};
    return key;
  }

  static std::vector<RadixScanVariant> declared(const DeviceInfo& info) {
    bool sub = subgroup_scans(info);
    return {{false, false, sub}, {false, true, sub}, {true, false, sub}};
  }
};

// radix_scatter.comp: one digit's pass moving keys (and, with `arg`, indices) to their places;
// the last pass of an argsort stores the indices as `index_type`.
struct RadixScatterVariant {
  static constexpr const char* kTemplate = "radix_scatter";
  DType in = DType::F32;
  bool descending = false;
  ScatterConfig cfg;
  bool arg = false, first = false, last = false;
  std::optional<DType> index_type;  // set where arg and last

  auto fields() const { return std::tie(in, descending, cfg, arg, first, last, index_type); }

  KernelKey source() const {
    KernelKey key;
    key.name = kTemplate;
    add_common(key, cfg.workgroup, in, descending, index_type);
    auto& d = key.defines;
    d.emplace_back("ITEMS", std::to_string(cfg.items));
    d.emplace_back("KW", std::to_string(cfg.key_words));
    d.emplace_back("SHARED_WORDS", std::to_string(cfg.shared_words));
    d.emplace_back("GROUPS", std::to_string(cfg.groups));
    d.emplace_back("MATCH_SHARED", cfg.match_shared ? "1" : "0");
    d.emplace_back("GROUP", std::to_string(std::max<uint32_t>(cfg.group, 1)));
    d.emplace_back("ARG", arg ? "1" : "0");
    d.emplace_back("FIRST", first ? "1" : "0");
    d.emplace_back("LAST", last ? "1" : "0");
    if (index_type) add_index_store_defines(d, *index_type);
    return key;
  }

  // Every sortable type, each direction, with the device's tile: each kind of pass of a sort
  // and of an argsort (s64 indices).
  static std::vector<RadixScatterVariant> declared(const DeviceInfo& info) {
    std::vector<RadixScatterVariant> all;
    for (DType in : kAllDTypes) {
      if (!sortable(in)) continue;
      for (bool arg : {false, true}) {
        ScatterConfig cfg;
        try {
          cfg = scatter_config(info, dtype_size(in), arg);
        } catch (const Error&) {
          continue;  // no tile fits: the lowering throws too
        }
        for (bool descending : {false, true})
          for (auto [first, last] : pass_kinds(dtype_size(in)))
            all.push_back({in, descending, cfg, arg, first, last,
                           arg && last ? std::optional<DType>(DType::S64) : std::nullopt});
      }
    }
    return all;
  }
};

std::shared_ptr<Buffer> scratch(DeviceImpl& impl, uint64_t bytes) { return impl.allocate(std::max<uint64_t>(bytes, 4)); }

}  // namespace

void declare_radix_variants(std::vector<DeclaredVariant>& out, const DeviceInfo& info) {
  declare_variants<RadixHistogramVariant>(out, info);
  declare_variants<RadixScanVariant>(out, info);
  declare_variants<RadixScatterVariant>(out, info);
}

void lower_radix_sort(const LowerArgs& a, const SortAttrs& attrs) {
  DeviceImpl& impl = a.device.impl();
  const DeviceCore& core = *impl.core;
  const Tensor& in = a.inputs[0].tensor;
  bool arg = a.op == OpId::argsort;
  size_t rank = in.shape.size();
  size_t axis = size_t(attrs.axis);

  // Rows along the last axis, dense: the input itself, or a copy with the axis moved last.
  bool last_axis = axis + 1 == rank;
  bool permute = !last_axis || !in.is_contiguous();
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + int64_t(axis));
  perm.push_back(int64_t(axis));
  Tensor keys = in;
  uint32_t keys_slot = a.inputs[0].slot;
  if (permute) {
    Tensor view = transpose_view(in, perm);
    keys = empty(a.device, in.type, view.shape);
    keys_slot = a.builder.bind(keys.buffer);
    append_copy(a.device, a.builder, view, a.inputs[0].slot, keys, keys_slot);
  }
  uint64_t n = uint64_t(in.shape[axis]);
  uint64_t total = uint64_t(in.size());
  uint64_t rows = total / n;
  // Where the last pass writes: the output, or rows to permute back into it.
  Tensor sorted;
  uint32_t sorted_slot = a.output_slot;
  if (permute) {
    sorted = empty(a.device, a.out.type, keys.shape);
    sorted_slot = a.builder.bind(sorted.buffer);
  }

  ScatterConfig cfg = scatter_config(core.info(), dtype_size(in.type), arg);
  uint64_t tiles_per_row = (n + cfg.tile() - 1) / cfg.tile();
  size_t key_bytes = dtype_size(in.type);
  uint32_t passes = uint32_t(key_bytes);
  uint32_t hist_slot = a.builder.bind(scratch(impl, rows * 256 * tiles_per_row * 4));
  uint32_t bases_slot = a.builder.bind(scratch(impl, rows * 256 * 4));
  uint32_t key_tmp[2] = {0, 0}, idx_tmp[2] = {0, 0};
  for (uint32_t i = 0; i < std::min<uint32_t>(2, passes - 1); ++i) {
    key_tmp[i] = a.builder.bind(scratch(impl, total * key_bytes));
    if (arg) idx_tmp[i] = a.builder.bind(scratch(impl, total * 4));
  }

  const Kernel& histogram = impl.kernels.get(RadixHistogramVariant{in.type, attrs.descending});
  // Rows of few tiles: an invocation per segment rather than a workgroup.
  bool serial_scan = tiles_per_row <= kSerialScanTiles;
  bool subgroup = subgroup_scans(core.info());
  auto scatter_kernel = [&](bool first, bool last) -> const Kernel& {
    std::optional<DType> index_type = arg && last ? std::optional<DType>(a.out.type) : std::nullopt;
    return impl.kernels.get(RadixScatterVariant{in.type, attrs.descending, cfg, arg, first, last, index_type});
  };

  RadixPush push{};
  push.rows = uint32_t(rows), push.n = uint32_t(n), push.tiles_per_row = uint32_t(tiles_per_row);
  push.tile = cfg.tile(), push.segments = uint32_t(rows * 256);
  uint64_t tiles = rows * tiles_per_row;
  BufferRef keys_in{keys_slot, uint64_t(keys.offset) * key_bytes};
  BufferRef idx_in{};
  for (uint32_t p = 0; p < passes; ++p) {
    bool first = p == 0, last = p + 1 == passes;
    push.shift = 8 * p;
    BufferRef hist{hist_slot, 0}, bases{bases_slot, 0};

    uint64_t histogram_groups = rows * ((tiles_per_row + kHistogramTiles - 1) / kHistogramTiles);
    Launch& h = a.builder.launch(histogram, {workgroups_for(core, histogram_groups * 256, 256), 1, 1}, push,
                                 {{offsetof(RadixPush, keys_in), keys_in}, {offsetof(RadixPush, hist), hist}});
    a.builder.use(h, keys_in.slot, Access::Read);
    a.builder.use(h, hist_slot, Access::Write);

    const Kernel& scan = impl.kernels.get(RadixScanVariant{false, serial_scan, subgroup});
    uint64_t scan_threads = rows * 256 * (serial_scan ? 1 : kScanWorkgroup);
    Launch& s = a.builder.launch(scan, {workgroups_for(core, scan_threads, kScanWorkgroup), 1, 1}, push,
                                 {{offsetof(RadixPush, hist), hist}, {offsetof(RadixPush, bases), bases}});
    a.builder.use(s, hist_slot, Access::Read);
    a.builder.use(s, hist_slot, Access::Write);
    a.builder.use(s, bases_slot, Access::Write);

    const Kernel& base_scan = impl.kernels.get(RadixScanVariant{true, false, subgroup});
    Launch& b = a.builder.launch(base_scan, {workgroups_for(core, rows * kScanWorkgroup, kScanWorkgroup), 1, 1}, push,
                                 {{offsetof(RadixPush, hist), hist}, {offsetof(RadixPush, bases), bases}});
    a.builder.use(b, bases_slot, Access::Read);
    a.builder.use(b, bases_slot, Access::Write);

    BufferRef keys_out{last ? sorted_slot : key_tmp[p % 2], 0};
    BufferRef idx_out{last ? sorted_slot : idx_tmp[p % 2], 0};
    std::vector<AddressPatch> patches{{offsetof(RadixPush, keys_in), keys_in},
                                      {offsetof(RadixPush, hist), hist},
                                      {offsetof(RadixPush, bases), bases}};
    if (!arg || !last) patches.push_back({offsetof(RadixPush, keys_out), keys_out});
    if (arg) {
      if (!first) patches.push_back({offsetof(RadixPush, idx_in), idx_in});
      patches.push_back({offsetof(RadixPush, idx_out), idx_out});
    }
    const Kernel& scatter = scatter_kernel(first, last);
    Launch& sc = a.builder.launch(scatter, {workgroups_for(core, tiles * cfg.workgroup, cfg.workgroup), 1, 1}, push,
                                  std::move(patches));
    a.builder.use(sc, keys_in.slot, Access::Read);
    a.builder.use(sc, hist_slot, Access::Read);
    a.builder.use(sc, bases_slot, Access::Read);
    if (arg && !first) a.builder.use(sc, idx_in.slot, Access::Read);
    if (!arg || !last) a.builder.use(sc, keys_out.slot, Access::Write);
    if (arg) a.builder.use(sc, idx_out.slot, Access::Write);
    keys_in = keys_out;
    idx_in = idx_out;
  }

  if (permute) {
    std::vector<int64_t> inverse(rank);
    for (size_t i = 0; i < rank; ++i) inverse[size_t(perm[i])] = int64_t(i);
    append_copy(a.device, a.builder, transpose_view(sorted, inverse), sorted_slot, a.output, a.output_slot);
  }
}

}  // namespace nxv
