#include "fixture.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace nxv::fixtures {

namespace {

std::optional<DType> engine_type(const std::string& name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

size_t type_bytes(const std::string& name) {
  // Nx spelling: letter(s) then bits.
  size_t i = 0;
  while (i < name.size() && !std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
  if (i == name.size()) throw std::runtime_error("bad type name: " + name);
  return static_cast<size_t>(std::stoi(name.substr(i))) / 8;
}

std::vector<std::byte> from_hex(const std::string& hex) {
  if (hex.size() % 2) throw std::runtime_error("odd hex length");
  std::vector<std::byte> out(hex.size() / 2);
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::runtime_error("bad hex digit");
  };
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>(nib(hex[2 * i]) * 16 + nib(hex[2 * i + 1]));
  return out;
}

HostTensor parse_tensor(const nlohmann::json& j, bool with_data) {
  HostTensor t;
  t.type_name = j.at("type").get<std::string>();
  t.type = engine_type(t.type_name);
  t.shape = j.at("shape").get<Shape>();
  if (with_data) {
    t.bytes = from_hex(j.at("data").get<std::string>());
    size_t want = static_cast<size_t>(t.size()) * type_bytes(t.type_name);
    if (t.bytes.size() != want)
      throw std::runtime_error("tensor data has " + std::to_string(t.bytes.size()) +
                               " bytes, expected " + std::to_string(want));
  }
  return t;
}

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// ---- float decoding ----

double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = man ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (exp == 0) v = std::ldexp(man, -24);
  else v = std::ldexp(man + 1024, exp - 25);
  return sign ? -v : v;
}

double bf16_to_double(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  return std::bit_cast<float>(bits);
}

struct FloatKind {
  int bits;       // 8, 16, 32, 64
  bool is_bf16;   // for 16
  bool is_e4m3fn = false;  // for 8 (else E5M2)
};

FloatKind float_kind(const std::string& type) {
  return {static_cast<int>(type_bytes(type) * 8), type == "bf16", type == "f8_e4m3fn"};
}

bool is_float_name(const std::string& type) {
  return type == "f8" || type == "f8_e4m3fn" || type == "f16" || type == "bf16" || type == "f32" || type == "f64";
}

// Bits of one float component, widened to 64.
uint64_t load_bits(const std::byte* p, int bits) {
  uint64_t v = 0;
  std::memcpy(&v, p, static_cast<size_t>(bits / 8));
  return v;
}

double to_double(uint64_t bits, FloatKind k) {
  switch (k.bits) {
    case 8: return k.is_e4m3fn ? f8e4m3fn_to_double(static_cast<uint8_t>(bits)) : f8_to_double(static_cast<uint8_t>(bits));
    case 16: return k.is_bf16 ? bf16_to_double(static_cast<uint16_t>(bits))
                              : half_to_double(static_cast<uint16_t>(bits));
    case 32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    default: return std::bit_cast<double>(bits);
  }
}

bool is_nan_bits(uint64_t bits, FloatKind k) { return std::isnan(to_double(bits, k)); }
bool is_inf_bits(uint64_t bits, FloatKind k) { return std::isinf(to_double(bits, k)); }

// Monotonic integer image of a float's bits (-0 and +0 both map to 0).
int64_t ordered(uint64_t bits, FloatKind k) {
  uint64_t sign_bit = uint64_t{1} << (k.bits - 1);
  uint64_t mag = bits & (sign_bit - 1);
  return (bits & sign_bit) ? -static_cast<int64_t>(mag) : static_cast<int64_t>(mag);
}

// The spacing of floats of kind k at magnitude |x| (x finite).
double ulp_at(double x, FloatKind k) {
  x = std::fabs(x);
  int mant = k.bits == 64 ? 53 : k.bits == 32 ? 24 : k.is_bf16 ? 8 : 11;
  int min_exp = k.bits == 64 ? -1022 : k.bits == 32 || k.is_bf16 ? -126 : -14;
  int e = x == 0 ? min_exp : std::max(std::ilogb(x), min_exp);
  return std::ldexp(1.0, e - (mant - 1));
}

// Whether `got` matches `want` for a real float component.
bool float_ok(uint64_t got, uint64_t want, FloatKind k, int64_t tol, double extra_abs = 0) {
  bool gn = is_nan_bits(got, k), wn = is_nan_bits(want, k);
  if (gn || wn) return gn && wn;
  if (got == want) return true;
  if (is_inf_bits(got, k) || is_inf_bits(want, k)) return false;
  if (tol == 0 && extra_abs == 0) return false;  // bit-exact, sign of zero included
  int64_t a = ordered(got, k), b = ordered(want, k);
  uint64_t d = a > b ? uint64_t(a) - uint64_t(b) : uint64_t(b) - uint64_t(a);  // may not fit int64_t
  if (d <= uint64_t(tol)) return true;
  return std::fabs(to_double(got, k) - to_double(want, k)) <= extra_abs;
}

std::string hex_bits(uint64_t v, int bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", bits / 4, static_cast<unsigned long long>(v));
  return buf;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

double f8_to_double(uint8_t b) {
  int exp = (b >> 2) & 31, man = b & 3;
  double v = exp == 31 ? (man ? std::numeric_limits<double>::quiet_NaN() : INFINITY)
             : (b & 0x7F) == 0 ? 0.0
                               : std::ldexp(1.0 + man / 4.0, exp - 15);
  return b >> 7 ? -v : v;
}

double f8e4m3fn_to_double(uint8_t b) {
  int exp = (b >> 3) & 15, man = b & 7;
  double v = (b & 0x7F) == 0x7F ? std::numeric_limits<double>::quiet_NaN()
             : exp == 0         ? std::ldexp(man / 8.0, -6)
                                : std::ldexp(1.0 + man / 8.0, exp - 7);
  return b >> 7 ? -v : v;
}

int64_t HostTensor::size() const { return shape_size(shape); }

std::string HostTensor::describe() const { return type_name + shape_text(shape); }

bool Case::has_engine_types() const {
  if (!out_type || !expected.type) return false;
  return std::all_of(inputs.begin(), inputs.end(), [](const HostTensor& t) { return t.type; });
}

std::string Case::describe() const {
  std::string s = file + "#" + std::to_string(index) + " " + op + " out " + out_type_name +
                  shape_text(out_shape) + " inputs (";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i].describe();
  s += ") options " + options.dump() + " tolerance_ulp " + std::to_string(tolerance_ulp);
  return s;
}

std::string fixtures_dir() {
  if (const char* env = std::getenv("NXV_FIXTURES_DIR"); env && *env) return env;
#ifdef NXV_FIXTURES_DIR
  return NXV_FIXTURES_DIR;
#else
  return "test/fixtures";
#endif
}

std::vector<Case> load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open fixture file " + path);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error("malformed fixture file " + path + ": " + e.what());
  }
  std::string file = std::filesystem::path(path).filename().string();
  std::vector<Case> cases;
  const auto& arr = doc.at("cases");
  cases.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& j = arr[i];
    try {
      Case c;
      c.file = file;
      c.index = i;
      c.op = j.at("op").get<std::string>();
      HostTensor out = parse_tensor(j.at("out"), false);
      c.out_type_name = out.type_name;
      c.out_type = out.type;
      c.out_shape = out.shape;
      for (const auto& t : j.at("inputs")) c.inputs.push_back(parse_tensor(t, true));
      c.options = j.value("options", nlohmann::json::object());
      c.expected = parse_tensor(j.at("expected"), true);
      c.tolerance_ulp = j.value("tolerance_ulp", int64_t{0});
      cases.push_back(std::move(c));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + " case " + std::to_string(i) + ": " + e.what());
    }
  }
  return cases;
}

std::vector<Case> load_dir(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<Case> all;
  for (const auto& f : files) {
    auto cases = load_file(f.string());
    std::move(cases.begin(), cases.end(), std::back_inserter(all));
  }
  return all;
}

std::string format_element(const std::string& type, const std::byte* p) {
  auto cplx = [&](int bits) {
    FloatKind k{bits, false};
    uint64_t re = load_bits(p, bits), im = load_bits(p + bits / 8, bits);
    return "(" + num(to_double(re, k)) + ", " + num(to_double(im, k)) + ") (" + hex_bits(re, bits) +
           ", " + hex_bits(im, bits) + ")";
  };
  if (type == "c64") return cplx(32);
  if (type == "c128") return cplx(64);
  if (is_float_name(type)) {
    FloatKind k = float_kind(type);
    uint64_t b = load_bits(p, k.bits);
    return num(to_double(b, k)) + " (" + hex_bits(b, k.bits) + ")";
  }
  int bits = static_cast<int>(type_bytes(type) * 8);
  uint64_t u = load_bits(p, bits);
  if (type[0] == 's' && bits < 64 && (u >> (bits - 1)) & 1) u |= ~uint64_t{0} << bits;
  return type[0] == 's' ? std::to_string(static_cast<int64_t>(u)) : std::to_string(u);
}

std::vector<std::string> compare(const HostTensor& expected, const std::vector<std::byte>& got,
                                 int64_t tol, size_t max_report,
                                 const std::vector<HostTensor>* inputs) {
  std::vector<std::string> report;
  if (got.size() != expected.bytes.size()) {
    report.push_back("result has " + std::to_string(got.size()) + " bytes, expected " +
                     std::to_string(expected.bytes.size()));
    return report;
  }
  const std::string& type = expected.type_name;
  size_t esize = type_bytes(type);
  int64_t n = expected.size();
  bool is_cplx = type[0] == 'c';
  bool is_flt = is_float_name(type);
  size_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::byte* g = got.data() + i * esize;
    const std::byte* w = expected.bytes.data() + i * esize;
    bool ok;
    if (is_cplx) {
      int bits = static_cast<int>(esize * 4);
      FloatKind k{bits, false};
      uint64_t gr = load_bits(g, bits), gi = load_bits(g + esize / 2, bits);
      uint64_t wr = load_bits(w, bits), wi = load_bits(w + esize / 2, bits);
      double extra = 0;
      double wre = to_double(wr, k), wim = to_double(wi, k);
      if (tol > 0 && std::isfinite(wre) && std::isfinite(wim))
        extra = static_cast<double>(tol) * ulp_at(std::max(std::fabs(wre), std::fabs(wim)), k);
      ok = float_ok(gr, wr, k, tol, extra) && float_ok(gi, wi, k, tol, extra);
    } else if (is_flt) {
      FloatKind k = float_kind(type);
      ok = float_ok(load_bits(g, k.bits), load_bits(w, k.bits), k, tol);
    } else {
      ok = std::memcmp(g, w, esize) == 0;
    }
    if (ok) continue;
    if (bad++ < max_report) {
      std::string line = "  index " + std::to_string(i) + ": got " + format_element(type, g) +
                         ", expected " + format_element(type, w);
      if (inputs) {
        // Inputs at the same flat index, where they have the result's element count.
        std::string ins;
        for (const auto& in : *inputs)
          if (in.size() == n)
            ins += (ins.empty() ? "" : ", ") +
                   format_element(in.type_name, in.bytes.data() + i * type_bytes(in.type_name));
          else if (in.size() == 1)
            ins += (ins.empty() ? "" : ", ") + format_element(in.type_name, in.bytes.data());
        if (!ins.empty()) line += "; inputs there: " + ins;
      }
      report.push_back(line);
    }
  }
  if (bad > 0)
    report.push_back("  " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ");
  return report;
}

}  // namespace nxv::fixtures
