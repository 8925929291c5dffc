// Graph simplifications of elementwise nodes (Family::append_simplified): cheaper nodes with
// the bits of the node run alone.
#pragma once
#include <optional>
#include <span>

#include "nxv/graph.hpp"

namespace nxv {

// A comparison of a float with an integer constant that the float type holds exactly compares
// two floats.
std::optional<uint32_t> simplify_comparison_with_constant(const GraphNode& n, const Graph& graph,
                                                          std::span<const uint32_t> inputs, Graph& out);

// A float division by a constant power of two, or by a select of two such constants, is a
// multiplication by the reciprocal, computed in the type the division computes in.
std::optional<uint32_t> simplify_division_by_power_of_two(const GraphNode& n, std::span<const uint32_t> inputs,
                                                          Graph& out, bool has_f64);

}  // namespace nxv
