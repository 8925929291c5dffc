// Elementwise family: binary arithmetic, unary math and as_type, on every real Nx type, with
// Nx broadcasting (operands arrive un-broadcast and in their own types) and any layout.
#include <map>
#include <string>

#include "common/errors.hpp"
#include "device/device_impl.hpp"
#include "ops/dispatch.hpp"
#include "ops/glsl_types.hpp"
#include "ops/registry.hpp"

namespace nxv {
namespace {

constexpr uint32_t kWorkgroupSize = 256;

struct ElementwiseDef {
  int arity;
  bool float_out;          // Nx gives these a float output (divide, exp, log)
  std::string float_expr;  // on compute type float/double: a, b
  std::string double_expr;  // when it differs for double (GLSL lacks double exp/log)
  std::string int_expr;    // on integer compute types
};

const std::map<std::string, ElementwiseDef, std::less<>>& defs() {
  static const std::map<std::string, ElementwiseDef, std::less<>> d = {
      {"add", {2, false, "(a + b)", "", "(a + b)"}},
      {"subtract", {2, false, "(a - b)", "", "(a - b)"}},
      {"multiply", {2, false, "(a * b)", "", "(a * b)"}},
      {"divide", {2, true, "(a / b)", "", ""}},
      {"max", {2, false, "NXV_FMAX(a, b)", "", "NXV_IMAX(a, b)"}},
      {"min", {2, false, "NXV_FMIN(a, b)", "", "NXV_IMIN(a, b)"}},
      {"negate", {1, false, "(-a)", "", "(-a)"}},
      {"exp", {1, true, "nxv_expf(a)", "nxv_exp(a)", ""}},
      {"log", {1, true, "nxv_logf(a)", "nxv_log(a)", ""}},
      {"as_type", {1, false, "", "", ""}},
  };
  return d;
}

bool supported_real(DType t) { return !is_complex(t); }

std::string int_limit(DType t, bool max) {
  switch (t) {
    case DType::U8: return max ? "255u" : "0u";
    case DType::U16: return max ? "65535u" : "0u";
    case DType::U32: return max ? "4294967295u" : "0u";
    case DType::U64: return max ? "NXV_U64_MAX" : "0";
    case DType::S8: return max ? "127" : "(-128)";
    case DType::S16: return max ? "32767" : "(-32768)";
    case DType::S32: return max ? "2147483647" : "(-2147483647 - 1)";
    case DType::S64: return max ? "NXV_S64_MAX" : "NXV_S64_MIN";
    default: return "0";
  }
}

// as_type: Nx truncates floats toward zero and writes the integer's low bits; NaN becomes 0 and
// infinities the type's extremes.
std::string cast_expr(DType from, DType to) {
  std::string c = glsl_compute_type(to);
  if (is_float(from) && is_integer(to)) {
    std::string low = dtype_size(to) == 8 ? "nxv_trunc_low64(a)" : "nxv_trunc_low32(a)";
    return "(isnan(a) ? " + c + "(0) : isinf(a) ? (a > 0 ? " + c + "(" + int_limit(to, true) + ") : " + c + "(" +
           int_limit(to, false) + ")) : " + c + "(" + low + "))";
  }
  return c + "(a)";
}

void check_elementwise(Device& device, std::string_view op, const OutSpec& out, const std::vector<DType>& in) {
  const auto& def = defs().find(op)->second;
  if (int(in.size()) != def.arity)
    throw Error(ErrorKind::InvalidArgument, std::string(op) + " takes " + std::to_string(def.arity) + " tensors, got " +
                                                std::to_string(in.size()));
  if (!supported_real(out.type))
    throw Error(ErrorKind::Unsupported, std::string(op) + " on complex types is not native yet");
  for (DType t : in)
    if (!supported_real(t)) throw Error(ErrorKind::Unsupported, std::string(op) + " on complex inputs is not native yet");
  if (op != "as_type" && is_integer(out.type))
    for (DType t : in)
      if (!is_integer(t))
        throw Error(ErrorKind::InvalidArgument, std::string(op) + ": an integer output cannot come from float inputs "
                                                                  "(Nx promotes the output type first)");
  if (def.float_out && !is_float(out.type))
    throw Error(ErrorKind::InvalidArgument, std::string(op) + " needs a floating-point output type");
  FeatureSet features;
  features.add_type(out.type);
  for (DType t : in) features.add_type(t);
  if (op == "as_type" && is_float(in[0]) && dtype_size(out.type) == 8) features.need_int64();
  if (op == "as_type" && in[0] == DType::F64 && is_integer(out.type)) features.need_int64();
  features.check(*device.impl().core, std::string(op).c_str());
}

void check_broadcastable(const Tensor& t, const Shape& out, std::string_view op) {
  bool ok = t.shape.size() <= out.size();
  for (size_t i = 0; ok && i < t.shape.size(); ++i) {
    int64_t o = out[out.size() - t.shape.size() + i];
    ok = t.shape[i] == o || t.shape[i] == 1;
  }
  if (!ok) throw Error(ErrorKind::InvalidArgument, std::string(op) + ": an operand cannot be broadcast to the output shape");
}

KernelKey make_key(std::string_view op, DType out, const std::vector<DType>& in, bool linear) {
  const auto& def = defs().find(op)->second;
  std::string c = glsl_compute_type(out);
  KernelKey key{"elementwise", {}, kWorkgroupSize};
  auto& d = key.defines;
  FeatureSet features;
  features.add_type(out);
  for (DType t : in) features.add_type(t);
  if (op == "as_type" && is_float(in[0]) && (dtype_size(out) == 8 || in[0] == DType::F64) && is_integer(out))
    features.need_int64();
  features.add_defines(d);
  d.emplace_back("NIN", std::to_string(in.size()));
  d.emplace_back("LINEAR", linear ? "1" : "0");
  d.emplace_back("C", c);
  d.emplace_back("OUT_STORE", glsl_storage_type(out));
  d.emplace_back("OUT_ALIGN", std::to_string(dtype_size(out)));
  d.emplace_back("STORE_OUT(v)", glsl_store(out));
  const char* names[] = {"A", "B"};
  for (size_t i = 0; i < in.size(); ++i) {
    std::string n = names[i];
    std::string load_type = op == "as_type" ? glsl_compute_type(in[i]) : c;
    d.emplace_back(n + "_STORE", glsl_storage_type(in[i]));
    d.emplace_back(n + "_ALIGN", std::to_string(dtype_size(in[i])));
    d.emplace_back("LOAD_" + n + "(x)", glsl_load(in[i], load_type));
  }
  std::string expr;
  if (op == "as_type") expr = cast_expr(in[0], out);
  else if (out == DType::F64 && !def.double_expr.empty()) expr = def.double_expr;
  else expr = is_float(out) ? def.float_expr : def.int_expr;
  d.emplace_back(def.arity == 2 ? "OP(a,b)" : "OP(a)", expr);
  return key;
}

// Records `key` over `out` with `views` (inputs already broadcast to out's shape).
void record_elementwise(Device& device, const Tensor& out, const std::vector<Tensor>& views, KernelKey key,
                        bool dense) {
  auto& impl = device.impl();
  const Kernel& kernel = impl.kernels.get(key);
  vk::PipelineLayout layout = impl.kernels.layout();
  impl.stream.record([&](Recorder& rec) {
    for (const auto& v : views) rec.use(v.buffer, Access::Read);
    rec.use(out.buffer, Access::Write);
    const auto& cmd = rec.cmd();
    cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
    plan_elementwise(out, views, dense, [&](ElementwisePush& p) {
      cmd.pushConstants<ElementwisePush>(layout, vk::ShaderStageFlagBits::eCompute, 0, p);
      cmd.dispatch(workgroups_for(*impl.core, p.n, kernel.workgroup_size), 1, 1);
      rec.count_command();
    });
  });
}

Tensor run_elementwise(const OpCall& call) {
  if (call.op == "as_type" && call.inputs[0].type == call.out.type) return call.inputs[0];
  for (const auto& t : call.inputs) check_broadcastable(t, call.out.shape, call.op);
  Tensor out = empty(call.device, call.out.type, call.out.shape);
  if (out.size() == 0) return out;
  std::vector<Tensor> views;
  std::vector<DType> types;
  for (const auto& t : call.inputs) {
    views.push_back(broadcast_view(t, call.out.shape));
    types.push_back(t.type);
  }
  bool dense = all_dense(views);
  record_elementwise(call.device, out, views, make_key(call.op, call.out.type, types, dense), dense);
  return out;
}

}  // namespace

void register_elementwise_ops() {
  for (const auto& [name, def] : defs()) register_op(name, OpImpl{check_elementwise, run_elementwise});
}

Tensor contiguous(Device& device, const Tensor& t) {
  if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
  if (t.is_contiguous() && t.offset == 0) return t;
  Tensor out = empty(device, t.type, t.shape);
  if (out.size() == 0) return out;
  std::vector<Tensor> views{t};
  bool dense = all_dense(views);
  // A bit copy: storage type in and out, so NaN payloads and bf16 patterns survive.
  KernelKey key{"elementwise", {}, kWorkgroupSize};
  FeatureSet features;
  features.add_type(t.type);
  features.check(*device.impl().core, "copy");
  features.add_defines(key.defines);
  std::string st = glsl_storage_type(t.type), align = std::to_string(dtype_size(t.type));
  key.defines.insert(key.defines.end(), {{"NIN", "1"}, {"LINEAR", dense ? "1" : "0"}, {"C", st}, {"OUT_STORE", st},
                                         {"OUT_ALIGN", align}, {"STORE_OUT(v)", "(v)"}, {"A_STORE", st},
                                         {"A_ALIGN", align}, {"LOAD_A(x)", "(x)"}, {"OP(a)", "(a)"}});
  record_elementwise(device, out, views, key, dense);
  return out;
}

}  // namespace nxv
