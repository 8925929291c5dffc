#include "kernels/spirv_bf16.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "nxv/error.hpp"

namespace nxv {
namespace {

// Opcodes and operands (SPIR-V unified grammar; SPV_KHR_bfloat16 for the last three).
enum : uint32_t {
  kOpExtension = 10, kOpCapability = 17, kOpTypeFloat = 22, kOpTypeVector = 23, kOpTypeMatrix = 24,
  kOpTypeArray = 28, kOpTypeRuntimeArray = 29, kOpTypeStruct = 30, kOpTypePointer = 32, kOpTypeFunction = 33,
  kOpTypeCooperativeMatrixKHR = 4456,
  kCapFloat16 = 9, kCapBFloat16TypeKHR = 5116, kCapBFloat16CooperativeMatrixKHR = 5118, kFPEncodingBFloat16KHR = 0,
};

// Debug and annotation instructions: their first operand may be a literal or names a target,
// never uses a type as a value's type.
bool names_or_annotates(uint32_t op) {
  switch (op) {
    case 2: case 3: case 4: case 5: case 6: case 7: case 8:  // source, names, strings, lines
    case 10: case 11: case 14: case 15: case 16: case 17:    // extensions, model, entry, modes, capabilities
    case 71: case 72: case 73: case 74: case 317: case 330: case 331: case 332: case 5632: case 5633:
      return true;
  }
  return false;
}

[[noreturn]] void refuse(const std::string& why) {
  throw Error(ErrorKind::Driver, "retyping f16 SPIR-V as bf16: " + why);
}

std::vector<uint32_t> literal_string(const char* s) {
  size_t n = std::strlen(s) + 1;  // with its terminating zero
  std::vector<uint32_t> w((n + 3) / 4, 0u);
  std::memcpy(w.data(), s, n);
  return w;
}

}  // namespace

std::vector<uint32_t> spirv_f16_to_bf16(const std::vector<uint32_t>& in) {
  if (in.size() < 5 || in[0] != 0x07230203u) refuse("not a SPIR-V module");
  // First pass: the 16-bit float type's id and where the capabilities end.
  uint32_t f16 = 0;
  size_t after_capabilities = 5;
  for (size_t i = 5; i < in.size();) {
    uint32_t count = in[i] >> 16, op = in[i] & 0xffffu;
    if (count == 0 || i + count > in.size()) refuse("malformed instruction stream");
    if (op == kOpCapability) after_capabilities = i + count;
    if (op == kOpTypeFloat && count == 3 && in[i + 2] == 16) f16 = in[i + 1];
    i += count;
  }
  if (!f16) refuse("the module has no 16-bit float type");

  std::vector<uint32_t> out(in.begin(), in.begin() + 5);
  out.reserve(in.size() + 16);
  bool had_float16 = false;
  for (size_t i = 5; i < in.size();) {
    uint32_t count = in[i] >> 16, op = in[i] & 0xffffu;
    const uint32_t* w = &in[i];
    auto uses = [&](size_t from, size_t to) { return std::find(w + from, w + std::min<size_t>(to, count), f16) != w + std::min<size_t>(to, count); };
    if (op == kOpTypeFloat && w[1] == f16) {
      out.insert(out.end(), {(4u << 16) | kOpTypeFloat, f16, 16u, kFPEncodingBFloat16KHR});
    } else if (op == kOpCapability && w[1] == kCapFloat16) {
      had_float16 = true;
      out.insert(out.end(), {(2u << 16) | kOpCapability, kCapBFloat16TypeKHR});
    } else {
      bool bad = false;
      if (op == kOpTypeCooperativeMatrixKHR) bad = uses(3, count);  // the component (operand 2) may be it
      else if (op == kOpTypeVector || op == kOpTypeMatrix || op == kOpTypeArray || op == kOpTypeRuntimeArray)
        bad = w[2] == f16;
      else if (op == kOpTypePointer) bad = w[3] == f16;
      else if (op == kOpTypeStruct || op == kOpTypeFunction) bad = uses(2, count);
      else if (!names_or_annotates(op)) bad = count > 1 && w[1] == f16;  // a value of the type
      if (bad) refuse("opcode " + std::to_string(op) + " uses the 16-bit float type other than in a cooperative matrix");
      out.insert(out.end(), w, w + count);
    }
    i += count;
    if (i == after_capabilities) {
      out.insert(out.end(), {(2u << 16) | kOpCapability, kCapBFloat16CooperativeMatrixKHR});
      std::vector<uint32_t> name = literal_string("SPV_KHR_bfloat16");
      out.push_back(uint32_t(1 + name.size()) << 16 | kOpExtension);
      out.insert(out.end(), name.begin(), name.end());
    }
  }
  if (!had_float16) refuse("the module does not declare the Float16 capability");
  return out;
}

}  // namespace nxv
