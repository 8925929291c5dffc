// Diagnostics. Validation-layer messages, for tests: NX_VULKAN_VALIDATION=1 turns the Khronos
// validation layer on for every device the process opens, and each message it reports is kept
// here.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nxv {

// Whether NX_VULKAN_CRASH_TRACE=1 asks for a stack trace on a fatal signal (read now).
bool crash_trace_requested();

// Every environment variable the engine reads, with its role ("user", "diagnostic" or "device").
struct SettingInfo {
  std::string_view name, role;
};
std::vector<SettingInfo> settings_read();

bool validation_enabled();
uint64_t validation_message_count();
std::vector<std::string> validation_messages();  // the most recent ones (bounded)
void clear_validation_messages();

}  // namespace nxv
