// Regions: a subgraph of small values as one launch of one workgroup (graph/region_forming.hpp
// forms them; ops/loop/loop_code.hpp generates their code, one trip of the loop kernel with no
// state). The op `region` computes the subgraph's outputs into one buffer of bytes, each output
// at its own offset; `region_output` is each output, a view of that buffer.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "nxv/graph.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

class Device;

// Values of at most this many elements each (a workgroup's 256 invocations take 64 apiece).
constexpr int64_t kRegionElements = 16384;

struct RegionAttrs {
  std::shared_ptr<const Graph> body;  // inputs: the region node's, in order; outputs: its values
  std::vector<uint64_t> offsets;      // each output's byte offset in the region's buffer
};

struct RegionOutputAttrs {
  uint64_t byte_offset = 0;
};

// Whether `node` of `graph` is a view there (reshape, broadcast, squeeze, a static slice, a
// transpose read through permuted strides): it computes nothing and launches nothing.
bool region_view(const GraphNode& node, const Graph& graph);

// Whether the region code computes `node` of `graph` (its op, types and sizes; a product only
// where its eager kernel is one workgroup's matrix-vector product).
bool region_computes(Device& device, const GraphNode& node, const Graph& graph);

// What a node's code asks of a kernel's float controls: a kernel that uses f64 declares f64's
// (nxv_float_controls.glsl), under which a driver may compile float math of several roundings
// otherwise than that math's own kernel does, so one region never holds both (the loop
// kernel's rule, after the elementwise chains').
enum class FloatControls : uint8_t { None = 0, F64 = 1, FloatMath = 2, Both = 3 };
constexpr FloatControls operator|(FloatControls a, FloatControls b) { return FloatControls(uint8_t(a) | uint8_t(b)); }
FloatControls region_float_controls(Device& device, const GraphNode& node, const Graph& graph);

// Whether `body` compiles as a region with row-major inputs (its code fits the workgroup's
// shared memory, no step refused); generates the code and compiles nothing.
bool region_compiles(Device& device, const Graph& body);

}  // namespace nxv
