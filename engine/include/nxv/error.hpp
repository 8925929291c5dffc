// The one exception type the engine throws; the NIF turns it into {:error, kind, message}.
#pragma once
#include <stdexcept>
#include <string>

namespace nxv {

enum class ErrorKind {
  InvalidArgument,  // bad shape, type, option: the caller's mistake
  Unsupported,      // valid request the device or engine cannot serve (says what is missing)
  OutOfMemory,      // device or host allocation failed; the device stays usable
  Deallocated,      // a tensor used after it was freed
  DeviceLost,       // the device was lost (driver reset, GPU fault): re-open it; its tensors are gone
  Driver,           // any other Vulkan failure; the message keeps the VkResult and the call
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

const char* error_kind_name(ErrorKind kind);  // "invalid_argument", "unsupported", ...

}  // namespace nxv
