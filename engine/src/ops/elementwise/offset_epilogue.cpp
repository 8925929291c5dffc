// Offset epilogues (offset_epilogue.hpp): each extra tensor as element strides over the output's
// axes (merged where all allow), read by nxv_epilogue from the output offset the kernel stores at.
#include "ops/elementwise/offset_epilogue.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "device/device_impl.hpp"
#include "kernels/fast_division.hpp"
#include "memory/copy.hpp"
#include "ops/dot/dot_plan.hpp"

namespace nxv {
namespace {

constexpr int64_t kMaxIndex = int64_t(1) << 31;

// nxv_epilogue's coordinates: offset i decomposed over p.ext (innermost last), `rank` axes,
// each of the `tensors` tensors' element index (at0, at1, ...).
// The rank is in the code, a loop of constant trip count: the cooperative-matrix kernel stores
// inside unrolled loops over its accumulators, which a loop of run-time trip count would keep
// rolled (the accumulators then in memory); and only the axes in use are read.
EpilogueCode offset_code(size_t rank, size_t tensors) {
  EpilogueCode c;
  c.name = "OffsetEpilogue";
  c.comment = "// the epilogue (ops/elementwise/offset_epilogue.cpp): output offset i from accumulator acc, in\n"
              "// the chain's compute type (STORE_EPILOGUE converts it where it is stored)\n";
  c.params_type = "OffsetEpilogueParams";
  c.params_expr = "NXV_EPILOGUE_PARAMS";
  std::string r = std::to_string(rank) + "u";
  c.index = "  uint at_rest = i;\n";
  for (size_t t = 0; t < tensors; ++t) c.index += "  uint at" + std::to_string(t) + " = 0u;\n";
  c.index +=
      "  [[unroll]] for (uint at_k = 0u; at_k < " + r + "; ++at_k) {\n"
      "    uint d = " + r + " - 1u - at_k;\n"
      "    uint at_q = nxv_fastdiv(at_rest, p.ext_magic[d], p.ext_shift[d]), at_c = at_rest - at_q * p.ext[d];\n"
      "    at_rest = at_q;\n";
  for (size_t t = 0; t < tensors; ++t) {
    std::string n = std::to_string(t);
    c.index += "    at" + n + " += at_c * p.s[" + n + "][d];\n";
    c.at.push_back("at" + n);
  }
  c.index += "  }\n";
  return c;
}

bool readable_in_place(const Tensor& view) {
  return std::all_of(view.strides.begin(), view.strides.end(), [](int64_t s) { return s >= 0; }) &&
         view.offset >= 0 && max_element_index(view.shape, view.strides, view.offset) < kMaxIndex;
}

}  // namespace

StoreEpilogue make_offset_epilogue(const LowerArgs& a, const ElementwiseChain& chain, DType product, size_t first_extra) {
  StoreEpilogue e;
  e.product = product;
  e.out = a.out.type;
  const Shape& shape = a.out.shape;
  // Each extra tensor's strides over the output's axes: its broadcast view where readable in
  // place (and `copy_all` unset), else a row-major copy.
  std::vector<std::vector<int64_t>> strides;
  auto read_extras = [&](bool copy_all) {
    e.extra.clear(), e.refs.clear(), strides.clear();
    for (size_t i = first_extra; i < a.inputs.size(); ++i) {
      const Tensor& t = a.inputs[i].tensor;
      Tensor view = broadcast_view(t, shape);
      e.extra.push_back(t.type);
      if (!copy_all && readable_in_place(view)) {
        e.refs.push_back({a.inputs[i].slot, uint64_t(view.offset) * dtype_size(t.type)});
        strides.push_back(view.strides);
        continue;
      }
      Tensor copy = empty(a.device, t.type, view.shape);
      uint32_t slot = a.builder.bind(copy.buffer);
      append_copy(a.device, a.builder, view, a.inputs[i].slot, copy, slot);
      e.refs.push_back({slot, 0});
      strides.push_back(copy.strides);
    }
  };
  // Axes of extent 1 have coordinate 0; an axis joins the one before where, for every tensor,
  // stepping the earlier one is stepping the later one across its extent.
  std::vector<int64_t> ext;
  std::vector<std::vector<int64_t>> merged;
  auto merge_axes = [&] {
    ext.clear();
    merged.assign(strides.size(), {});
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      bool joins = !ext.empty();
      for (size_t j = 0; j < strides.size() && joins; ++j) joins = merged[j].back() == strides[j][d] * shape[d];
      if (joins) {
        ext.back() *= shape[d];
        for (size_t j = 0; j < strides.size(); ++j) merged[j].back() = strides[j][d];
        continue;
      }
      ext.push_back(shape[d]);
      for (size_t j = 0; j < strides.size(); ++j) merged[j].push_back(strides[j][d]);
    }
  };
  read_extras(false);
  merge_axes();
  if (ext.size() > NXV_OFFSET_EPILOGUE_AXES) {  // row-major copies merge into one axis
    read_extras(true);
    merge_axes();
  }
  OffsetEpilogueParams p{};
  p.rank = uint32_t(ext.size());
  for (size_t d = 0; d < ext.size(); ++d) {
    p.ext[d] = uint32_t(ext[d]);
    fast_division(p.ext[d], p.ext_magic[d], p.ext_shift[d]);
    for (size_t t = 0; t < strides.size(); ++t) p.s[t][d] = uint32_t(merged[t][d]);
  }
  for (size_t t = 0; t < e.refs.size(); ++t)
    e.patches.push_back({uint32_t(offsetof(OffsetEpilogueParams, addr) + t * sizeof p.addr[0]), e.refs[t]});
  e.params.resize(sizeof p);
  std::memcpy(e.params.data(), &p, sizeof p);
  generate_store_epilogue(e, chain, a.device.has(kCapFloat64), offset_code(ext.size(), e.extra.size()));
  return e;
}

}  // namespace nxv
