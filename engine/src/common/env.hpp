// Environment switches, read per call where tests (and users) change them while a device lives.
#pragma once
#include <cstdlib>
#include <cstring>

namespace nxv {

// Whether the variable `name` is set to exactly `value`.
inline bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

}  // namespace nxv
