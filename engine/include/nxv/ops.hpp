// The op entry point. Same meaning as the Nx.Backend callbacks: an output spec chosen by Nx
// (shape and type, promotion already done), input tensors in their own types and shapes
// (un-broadcast), and the callback's options as JSON. Serves the NIF and the C++ tests alike.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "nxv/tensor.hpp"

namespace nxv {

struct OutSpec {
  DType type = DType::F32;
  Shape shape;
};

using Options = nlohmann::json;

// Records the op on the device's stream and returns at once; the result is ready when read.
// Throws nxv::Error: InvalidArgument (shapes/types/options), Unsupported (op, type or feature
// missing: the caller may fall back), OutOfMemory, Deallocated, Driver.
Tensor run_op(Device& device, std::string_view op, const OutSpec& out,
              const std::vector<Tensor>& inputs, const Options& options = Options::object());

// Whether `op` has a native implementation for this output/input typing on this device.
bool supports_op(Device& device, std::string_view op, const OutSpec& out,
                 const std::vector<DType>& input_types);

std::vector<std::string> native_op_names();

}  // namespace nxv
