// Validation-layer messages, for tests: NX_VULKAN_VALIDATION=1 turns the Khronos validation
// layer on for every device the process opens, and each message it reports is kept here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nxv {

bool validation_enabled();
uint64_t validation_message_count();
std::vector<std::string> validation_messages();  // the most recent ones (bounded)
void clear_validation_messages();

}  // namespace nxv
