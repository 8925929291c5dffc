// Replays the conformance fixtures (test/fixtures/*.json, generated from Nx.BinaryBackend by
// `mix nx_vulkan.fixtures`) through nxv::run_op. One test per op (Conformance/Op.Replay/<op>);
// every mismatch of a natively supported case is collected and reported, then the test fails.
// Cases the engine does not support natively (nxv::check_op says why) are counted, not run.
// Options are decoded through the op family's typed attributes (JsonAttrReader), as the NIF
// decodes Erlang terms.
// At the end: "fixtures: native N / total M (ops native: ...)".
//
// Lost native coverage fails: test/engine/native_coverage.txt holds, per device profile (the
// driver's name, plus NX_VULKAN_DISABLE's list when set), the native case count each op must
// reach. NXV_WRITE_COVERAGE=<file> writes this run's counts in that format.
//
// Fixture directory: env NXV_FIXTURES_DIR, else the compile definition NXV_FIXTURES_DIR.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <cstring>

#include "device/device_impl.hpp"
#include "fixture.hpp"
#include "json_attrs.hpp"
#include "nxv/device.hpp"
#include "nxv/error.hpp"
#include "nxv/ops.hpp"
#include "nxv/tensor.hpp"

namespace {

using nxv::fixtures::Case;

struct Fixtures {
  std::vector<Case> cases;
  std::map<std::string, std::vector<const Case*>> by_op;
  std::string error;  // load failure
};

const Fixtures& fixtures() {
  static const Fixtures f = [] {
    Fixtures f;
    try {
      f.cases = nxv::fixtures::load_dir(nxv::fixtures::fixtures_dir());
    } catch (const std::exception& e) {
      f.error = e.what();
    }
    for (const auto& c : f.cases) f.by_op[c.op].push_back(&c);
    return f;
  }();
  return f;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const auto& [op, _] : fixtures().by_op) names.push_back(op);
  if (names.empty()) names.push_back("none");  // keeps the suite instantiated; it then fails
  return names;
}

struct Tally {
  std::mutex mu;
  size_t total = 0, native = 0, failed = 0;
  std::map<std::string, std::pair<size_t, size_t>> per_op;  // op -> {native, total}
  std::string profile;
};

Tally& tally() {
  static Tally t;
  return t;
}

// "llvmpipe", or "llvmpipe disable=f16,f64,int64" under a capability mask (names sorted).
std::string coverage_profile(const nxv::Device& device) {
  std::string profile = device.info().driver_name;
  std::replace(profile.begin(), profile.end(), ' ', '_');
  const char* env = std::getenv("NX_VULKAN_DISABLE");
  if (!env || !*env) return profile;
  std::vector<std::string> names;
  std::stringstream list(env);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.push_back(name);
  std::sort(names.begin(), names.end());
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return profile + " disable=" + joined;
}

// profile -> op -> native cases expected at least. Lines: "<profile>|<op>|<count>".
const std::map<std::string, std::map<std::string, size_t>>& coverage_expectations() {
  static const auto expected = [] {
    std::map<std::string, std::map<std::string, size_t>> table;
    std::ifstream in(std::string(NXV_COVERAGE_FILE));
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      auto a = line.find('|'), b = line.rfind('|');
      if (a == std::string::npos || a == b) continue;
      table[line.substr(0, a)][line.substr(a + 1, b - a - 1)] = std::stoul(line.substr(b + 1));
    }
    return table;
  }();
  return expected;
}

class SummaryEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    auto& t = tally();
    std::lock_guard lock(t.mu);
    if (t.total == 0) return;
    std::string native_ops, partial_ops;
    for (const auto& [op, counts] : t.per_op) {
      if (counts.first == 0) continue;
      std::string entry = op;
      if (counts.first < counts.second)
        entry += " " + std::to_string(counts.first) + "/" + std::to_string(counts.second);
      native_ops += (native_ops.empty() ? "" : ", ") + entry;
    }
    std::printf("fixtures: native %zu / total %zu (ops native: %s)%s\n", t.native, t.total,
                native_ops.empty() ? "none" : native_ops.c_str(),
                t.failed ? (", " + std::to_string(t.failed) + " native cases FAILED").c_str() : "");
    std::fflush(stdout);
    if (const char* out = std::getenv("NXV_WRITE_COVERAGE"); out && *out && !t.profile.empty()) {
      std::ofstream file(out, std::ios::app);
      for (const auto& [op, counts] : t.per_op) file << t.profile << "|" << op << "|" << counts.first << "\n";
    }
  }
};

[[maybe_unused]] ::testing::Environment* const summary_env =
    ::testing::AddGlobalTestEnvironment(new SummaryEnvironment);

class Op : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    try {
      device_ = nxv::Device::open({});
    } catch (const std::exception& e) {
      open_error_ = e.what();
    }
  }
  static void TearDownTestSuite() { device_.reset(); }

  static std::shared_ptr<nxv::Device> device_;
  static std::string open_error_;
};

std::shared_ptr<nxv::Device> Op::device_;
std::string Op::open_error_;

// Whether `t` holds an f32 subnormal, or a value that is one in f32 (bf16's, c64's parts): a
// device that flushes f32 subnormals (NVIDIA: shaderDenormPreserveFloat32 false) cannot give
// Nx's bits for those (README, Known limits).
bool has_f32_subnormal(const nxv::fixtures::HostTensor& t) {
  if (!t.type) return false;
  auto subnormal32 = [](uint32_t bits) { return (bits & 0x7f800000u) == 0 && (bits & 0x007fffffu) != 0; };
  const std::byte* p = t.bytes.data();
  size_t n = t.bytes.size();
  switch (*t.type) {
    case nxv::DType::F32:
    case nxv::DType::C64:
      for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t b;
        std::memcpy(&b, p + i, 4);
        if (subnormal32(b)) return true;
      }
      return false;
    case nxv::DType::BF16:
      for (size_t i = 0; i + 2 <= n; i += 2) {
        uint16_t b;
        std::memcpy(&b, p + i, 2);
        if (subnormal32(uint32_t(b) << 16)) return true;
      }
      return false;
    default:
      return false;
  }
}

bool touches_f32_subnormals(const Case& c) {
  if (has_f32_subnormal(c.expected)) return true;
  return std::any_of(c.inputs.begin(), c.inputs.end(), [](const auto& in) { return has_f32_subnormal(in); });
}

// Runs one case; returns failure lines (empty when it matches).
std::vector<std::string> replay(nxv::Device& device, const Case& c, nxv::OpId op, const nxv::Attrs& attrs) {
  std::vector<nxv::Tensor> inputs;
  inputs.reserve(c.inputs.size());
  for (const auto& in : c.inputs)
    inputs.push_back(nxv::from_host(device, *in.type, in.shape, in.bytes.data(), in.bytes.size()));
  nxv::Tensor result = nxv::run_op(device, op, nxv::OutSpec{*c.out_type, c.out_shape}, inputs, attrs);
  if (result.type != *c.expected.type || result.shape != c.expected.shape) {
    std::string got_shape;
    for (auto d : result.shape) got_shape += (got_shape.empty() ? "" : ",") + std::to_string(d);
    return {"  result is " + std::string(nxv::dtype_name(result.type)) + "[" + got_shape +
            "], expected " + c.expected.describe()};
  }
  std::vector<std::byte> got = nxv::to_host(device, result);
  return nxv::fixtures::compare(c.expected, got, c.tolerance_ulp, 8, &c.inputs);
}

TEST_P(Op, Replay) {
  const auto& f = fixtures();
  ASSERT_TRUE(f.error.empty()) << "loading fixtures from " << nxv::fixtures::fixtures_dir()
                               << ": " << f.error;
  ASSERT_FALSE(f.cases.empty()) << "no fixtures in " << nxv::fixtures::fixtures_dir();
  if (!device_) GTEST_SKIP() << "no Vulkan device: " << open_error_;

  const std::string& op = GetParam();
  const auto& cases = f.by_op.at(op);
  size_t native = 0, failed = 0, flushed = 0;
  std::string failures;
  const bool flushes = !device_->impl().core->float_controls().denorm_preserve32;

  const char* every_env = std::getenv("NXV_CONFORMANCE_EVERY");
  const size_t every = every_env && *every_env ? std::max<size_t>(1, std::strtoul(every_env, nullptr, 10)) : 1;
  size_t index = 0;
  for (const Case* c : cases) {
    if (index++ % every != 0) continue;
    bool supported = false;
    auto op_id = nxv::find_op(c->op);
    nxv::Attrs attrs;
    if (op_id && c->has_engine_types()) {
      std::vector<nxv::TensorSpec> specs;
      for (const auto& in : c->inputs) specs.push_back(nxv::contiguous_spec(*in.type, in.shape));
      try {
        attrs = nxv::decode_attrs(*op_id, nxv::test::JsonAttrReader(c->options));
        supported = bool(nxv::check_op(*device_, *op_id, nxv::OutSpec{*c->out_type, c->out_shape}, specs, attrs));
      } catch (const std::exception& e) {
        ++failed;
        failures += c->describe() + "\n  decoding or checking threw: " + e.what() + "\n";
        continue;
      }
    }
    if (!supported) continue;
    ++native;
    if (flushes && touches_f32_subnormals(*c)) {
      ++flushed;
      continue;
    }
    std::vector<std::string> lines;
    try {
      lines = replay(*device_, *c, *op_id, attrs);
    } catch (const nxv::Error& e) {
      lines = {std::string("  threw ") + nxv::error_kind_name(e.kind()) + ": " + e.what()};
    } catch (const std::exception& e) {
      lines = {std::string("  threw: ") + e.what()};
    }
    if (lines.empty()) continue;
    ++failed;
    failures += c->describe() + "\n";
    for (const auto& l : lines) failures += l + "\n";
  }

  {
    auto& t = tally();
    std::lock_guard lock(t.mu);
    t.total += cases.size();
    t.native += native;
    t.failed += failed;
    t.per_op[op] = {native, cases.size()};
    t.profile = coverage_profile(*device_);
  }
  const auto& expected = coverage_expectations();
  if (auto profile = expected.find(coverage_profile(*device_)); every == 1 && profile != expected.end()) {
    auto want = profile->second.find(op);
    size_t floor = want == profile->second.end() ? 0 : want->second;
    EXPECT_GE(native, floor) << op << ": native coverage lost on '" << profile->first << "': " << native
                             << " of " << cases.size() << " cases run natively, " << floor
                             << " expected (test/engine/native_coverage.txt)";
  }
  if (flushed) std::printf("%s: %zu native cases with f32 subnormals not compared (the device flushes them)\n", op.c_str(), flushed);
  RecordProperty("native", static_cast<int>(native));
  RecordProperty("total", static_cast<int>(cases.size()));
  if (failed > 0)
    ADD_FAILURE() << op << ": " << failed << " of " << native << " native cases differ from Nx ("
                  << cases.size() << " cases in all)\n"
                  << failures;
}

INSTANTIATE_TEST_SUITE_P(Conformance, Op, ::testing::ValuesIn(op_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
