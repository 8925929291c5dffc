#include "kernels/glsl_emissions.hpp"

#include <atomic>

namespace nxv {
namespace {

std::atomic<uint64_t> g_emissions{0};

}  // namespace

void count_glsl_emission() { g_emissions.fetch_add(1, std::memory_order_relaxed); }

uint64_t glsl_emissions() { return g_emissions.load(std::memory_order_relaxed); }

}  // namespace nxv
