#include "common/errors.hpp"

namespace nxv {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "invalid_argument";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::OutOfMemory: return "out_of_memory";
    case ErrorKind::Deallocated: return "deallocated";
    case ErrorKind::DeviceLost: return "device_lost";
    case ErrorKind::Driver: return "driver";
  }
  return "driver";
}

ErrorKind error_kind_for(vk::Result result) {
  switch (result) {
    case vk::Result::eErrorOutOfDeviceMemory:
    case vk::Result::eErrorOutOfHostMemory:
    case vk::Result::eErrorOutOfPoolMemory:
      return ErrorKind::OutOfMemory;
    case vk::Result::eErrorFeatureNotPresent:
    case vk::Result::eErrorExtensionNotPresent:
    case vk::Result::eErrorLayerNotPresent:
    case vk::Result::eErrorFormatNotSupported:
      return ErrorKind::Unsupported;
    case vk::Result::eErrorDeviceLost:
      return ErrorKind::DeviceLost;
    default:
      return ErrorKind::Driver;
  }
}

void throw_vk(vk::Result result, const std::string& what) {
  throw Error(error_kind_for(result), what + " failed: " + vk::to_string(result));
}

}  // namespace nxv
