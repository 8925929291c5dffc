// Makes the probe kernels known to every kernel cache of the process that links them.
#include <map>
#include <string>

#include "kernels/kernel_cache.hpp"

namespace nxv {

const std::map<std::string, std::string>& probe_kernel_sources();

namespace {

[[maybe_unused]] const bool registered = (add_kernel_templates(probe_kernel_sources()), true);

}  // namespace
}  // namespace nxv
