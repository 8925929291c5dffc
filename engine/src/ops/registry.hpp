// The table from Nx callback names to engine implementations; one family per file registers
// its ops here.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nxv/ops.hpp"

namespace nxv {

struct OpCall {
  Device& device;
  std::string_view op;
  const OutSpec& out;
  const std::vector<Tensor>& inputs;
  const Options& options;
};

struct OpImpl {
  // Throws Unsupported / InvalidArgument with the reason when the call cannot run natively.
  std::function<void(Device&, std::string_view op, const OutSpec&, const std::vector<DType>&)> check;
  std::function<Tensor(const OpCall&)> run;
};

void register_op(const std::string& name, OpImpl impl);
const OpImpl* find_op(std::string_view name);
std::vector<std::string> registered_op_names();

// Family registration functions, called once on first use of the table.
void register_elementwise_ops();

}  // namespace nxv
