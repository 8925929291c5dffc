// Elementwise family: every Nx elementwise callback (table in elementwise_defs.cpp) on every Nx
// type, plus as_type and bitcast, with Nx broadcasting (operands arrive un-broadcast and in
// their own types) and any layout.
#include "ops/elementwise.hpp"

#include <algorithm>
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
// infinities the type's extremes. Complex to real keeps the real part.
std::string cast_expr(DType from, DType to) {
  std::string c = glsl_compute_type(to);
  std::string a = is_complex(from) ? "a.x" : "a";
  if (is_complex(to)) return is_complex(from) ? c + "(a)" : c + "(a, 0)";
  if ((is_float(from) || is_complex(from)) && is_integer(to)) {
    std::string low = dtype_size(to) == 8 ? "nxv_trunc_low64(" + a + ")" : "nxv_trunc_low32(" + a + ")";
    return "(isnan(" + a + ") ? " + c + "(0) : isinf(" + a + ") ? (" + a + " > 0 ? " + c + "(" + int_limit(to, true) +
           ") : " + c + "(" + int_limit(to, false) + ")) : " + c + "(" + low + "))";
  }
  return c + "(" + a + ")";
}

bool as_type_needs_int64(DType from, DType to) {
  return (is_float(from) || is_complex(from)) && is_integer(to) &&
         (dtype_size(to) == 8 || from == DType::F64 || from == DType::C128);
}

// The type whose class selects the op's expression.
DType compute_type(const EwDef& def, std::string_view op, DType out, const std::vector<DType>& in) {
  if (op == "select" || op == "as_type") return out;
  switch (def.load) {
    case EwLoad::ToOut: return out;
    case EwLoad::Common: return ew_common_type(in[0], in[1]);
    case EwLoad::Own: return in[0];
  }
  return out;
}

// Nx.BinaryBackend compares an integer with a float exactly (Erlang's number order), but an
// integer of 32 or 64 bits is not exact in f32, nor one of 64 bits in f64. Such pairs compare
// as int64/uint64 against double (nxv_order), so they need both.
bool exact_mixed_compare(const EwDef& def, const std::vector<DType>& in) {
  if (def.load != EwLoad::Common || def.out != EwOut::U8 || in.size() != 2) return false;
  auto wide_int = [](DType t) { return is_integer(t) && dtype_size(t) >= 4; };
  return (wide_int(in[0]) && is_float(in[1])) || (is_float(in[0]) && wide_int(in[1]));
}

std::string exact_mixed_compare_expr(std::string_view op, const std::vector<DType>& in) {
  static const std::map<std::string_view, std::string_view> symbols = {
      {"equal", "=="}, {"not_equal", "!="}, {"greater", ">"}, {"less", "<"}, {"greater_equal", ">="}, {"less_equal", "<="}};
  std::string f = is_float(in[0]) ? "a" : "b";
  std::string order = "nxv_order(a, b) " + std::string(symbols.at(op)) + " 0";
  return op == "not_equal" ? "C(isnan(" + f + ") || " + order + ")" : "C(!isnan(" + f + ") && " + order + ")";
}

unsigned rank_of(DType t) { return is_complex(t) ? 2 : is_float(t) ? 1 : 0; }

void check_elementwise(Device& device, std::string_view op, const OutSpec& out, const std::vector<DType>& in) {
  std::string name(op);
  if (op == "as_type" || op == "bitcast") {
    if (in.size() != 1) throw Error(ErrorKind::InvalidArgument, name + " takes 1 tensor");
    if (op == "bitcast" && dtype_size(in[0]) != dtype_size(out.type))
      throw Error(ErrorKind::InvalidArgument, "bitcast needs types of the same size");
    FeatureSet features;
    features.add_type(out.type);
    features.add_type(in[0]);
    if (op == "as_type" && as_type_needs_int64(in[0], out.type)) features.need_int64();
    features.check(*device.impl().core, name.c_str());
    return;
  }
  const EwDef& def = elementwise_defs().find(op)->second;
  if (int(in.size()) != def.arity)
    throw Error(ErrorKind::InvalidArgument,
                name + " takes " + std::to_string(def.arity) + " tensors, got " + std::to_string(in.size()));
  DType ct = compute_type(def, op, out.type, in);
  if (!(def.classes & ew_class(ct)))
    throw Error(ErrorKind::Unsupported, name + " is not defined on " + std::string(dtype_name(ct)) + " in Nx");
  switch (def.out) {
    case EwOut::Same:
      if (def.load == EwLoad::Own && out.type != in[0] && op != "count_leading_zeros" && op != "population_count")
        throw Error(ErrorKind::InvalidArgument, name + ": output type must be the input type");
      break;
    case EwOut::Inexact:
      if (is_integer(out.type)) throw Error(ErrorKind::InvalidArgument, name + " needs a float or complex output type");
      break;
    case EwOut::U8:
      if (out.type != DType::U8) throw Error(ErrorKind::InvalidArgument, name + " gives u8 in Nx");
      break;
    case EwOut::Real:
      if (is_complex(out.type) || (is_complex(in[0]) && !is_float(out.type)))
        throw Error(ErrorKind::InvalidArgument, name + " gives a real output type");
      // Nx: the real part type of c64 is f32, of c128 f64.
      if (in[0] == DType::C64 && out.type != DType::F32 && op != "phase")
        throw Error(ErrorKind::InvalidArgument, name + " of c64 gives f32");
      if (in[0] == DType::C128 && out.type != DType::F64 && op != "phase")
        throw Error(ErrorKind::InvalidArgument, name + " of c128 gives f64");
      if (op == "phase" && !is_float(out.type)) throw Error(ErrorKind::InvalidArgument, "phase gives a float output type");
      if (!is_complex(in[0]) && op != "phase" && out.type != in[0])
        throw Error(ErrorKind::InvalidArgument, name + ": output type must be the input type");
      break;
    case EwOut::Any: break;
  }
  if (def.load == EwLoad::ToOut)
    for (size_t i = (op == "select" ? 1 : 0); i < in.size(); ++i)
      if (rank_of(in[i]) > rank_of(out.type))
        throw Error(ErrorKind::InvalidArgument, name + ": an input type is wider than the output type "
                                                       "(Nx promotes the output type first)");
  FeatureSet features;
  features.add_type(out.type);
  features.add_type(ct);
  for (DType t : in) features.add_type(t);
  if (exact_mixed_compare(def, in)) {
    features.need_int64();
    features.need_f64();
  }
  features.check(*device.impl().core, name.c_str());
}

void check_broadcastable(const Tensor& t, const Shape& out, std::string_view op) {
  bool ok = t.shape.size() <= out.size();
  for (size_t i = 0; ok && i < t.shape.size(); ++i) {
    int64_t o = out[out.size() - t.shape.size() + i];
    ok = t.shape[i] == o || t.shape[i] == 1;
  }
  if (!ok) throw Error(ErrorKind::InvalidArgument, std::string(op) + ": an operand cannot be broadcast to the output shape");
}

// Nx.BinaryBackend computes every float result in f64 from the exact inputs and rounds once to
// the output type. Where the device has f64, narrower float outputs compute in f64 when an
// integer input is not exact in f32 (u32, s32, u64, s64: cos(2^31 - 1) needs every bit), and
// for the ops whose f32 result through f32 arithmetic is not within a few ulps (division: GPU
// float division may be 2.5 ulp off; atan2's quotient y / x, which drivers may flush for huge
// x; rsqrt, so that it rounds once as Nx does). sqrt, cbrt and pow round once from float loads
// (nxv_sqrt_f32.glsl, nxv_cbrt_f32, nxv_pow_f32.glsl: doubles inside where needed); erf, erfc
// and erf_inv have float algorithms of their own (nxv_erf_f32.glsl).
bool computes_in_f64(std::string_view op, const EwDef& def, DType out, const std::vector<DType>& in) {
  if (!is_float(out) || out == DType::F64 || def.load != EwLoad::ToOut) return false;
  static constexpr std::string_view kWide[] = {"divide", "atan2", "rsqrt"};
  if (std::find(std::begin(kWide), std::end(kWide), op) != std::end(kWide)) return true;
  return std::any_of(in.begin(), in.end(), [](DType t) { return is_integer(t) && dtype_size(t) >= 4; });
}

KernelKey make_key(std::string_view op, DType out, const std::vector<DType>& in, bool linear, bool vec4, bool has_f64) {
  std::string c = glsl_compute_type(out);
  KernelKey key{"elementwise", {}, kWorkgroupSize};
  auto& d = key.defines;
  FeatureSet features;
  features.add_type(out);
  for (DType t : in) features.add_type(t);
  std::string expr;
  std::vector<std::string> load_types(in.size(), c);
  if (op == "as_type") {
    if (as_type_needs_int64(in[0], out)) features.need_int64();
    load_types[0] = glsl_compute_type(in[0]);
    expr = cast_expr(in[0], out);
  } else {
    const EwDef& def = elementwise_defs().find(op)->second;
    DType ct = compute_type(def, op, out, in);
    features.add_type(ct);
    if (has_f64 && ew_class(ct) == kFloat && computes_in_f64(op, def, out, in)) {
      features.need_f64();
      c = "double";
      std::fill(load_types.begin(), load_types.end(), c);
    } else if (has_f64 && out == DType::C64 && def.load == EwLoad::ToOut && op != "add" && op != "subtract" &&
               op != "negate" && op != "select") {
      // c64 math and products as Nx does them: in f64, each component rounded once.
      features.need_f64();
      c = "dvec2";
      std::fill(load_types.begin(), load_types.end(), c);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      if (def.load == EwLoad::Common) load_types[i] = glsl_compute_type(ct);
      else if (def.load == EwLoad::Own || (op == "select" && i == 0)) load_types[i] = glsl_compute_type(in[i]);
    }
    expr = def.expr(EwCtx{out, in, ct});
    if (exact_mixed_compare(def, in)) {
      features.need_int64();
      features.need_f64();
      for (size_t i = 0; i < in.size(); ++i)
        load_types[i] = is_float(in[i]) ? "double" : is_signed(in[i]) ? "int64_t" : "uint64_t";
      expr = exact_mixed_compare_expr(op, in);
    }
    // Float results of sqrt, rsqrt and cbrt computed in double: only float rounding is needed
    // (nxv_to_f32.glsl), far cheaper than the double-exact versions.
    if (c == "double" && out != DType::F64 && (op == "sqrt" || op == "rsqrt" || op == "cbrt"))
      expr = "double(nxv_" + std::string(op) + "_to_f32(a))";
    // A float sqrt rounds correctly in float and integer arithmetic (nxv_sqrt_f32.glsl).
    if (c == "float" && op == "sqrt") expr = "nxv_sqrt_f32(a)";
    // A float cbrt takes its last Newton step in double from a float load (nxv_to_f32.glsl).
    if (c == "float" && op == "cbrt" && has_f64) {
      features.need_f64();
      expr = "nxv_cbrt_f32(a)";
    }
    // pow of a float result from float loads: double arithmetic only where a float result
    // needs it (nxv_pow_f32.glsl).
    if (c == "float" && op == "pow" && has_f64) {
      features.need_f64();
      d.emplace_back("NXV_POW_F32", "1");
      expr = "nxv_pow_f32(a, b)";
    }
    // Kernels bound by arithmetic rather than memory run faster as fewer, longer-lived
    // workgroups: 16384 of 256 invocations instead of 65535 measured 1-5% faster for these f32
    // ops on an H200, where memory-bound ones (multiply, negate, exp) lose 1-2% with that cap
    // and sin/cos move within the noise (bench/RESULTS.md, stop 11).
    static constexpr std::string_view kArithmeticBound[] = {"pow",   "tan",  "sinh",    "tanh",
                                                            "asinh", "erfc", "erf_inv", "cbrt"};
    if (c == "float" && std::ranges::find(kArithmeticBound, op) != std::end(kArithmeticBound))
      key.max_workgroups = 16384;
  }
  features.add_defines(d);
  d.emplace_back("NIN", std::to_string(in.size()));
  d.emplace_back("LINEAR", linear ? "1" : "0");
  d.emplace_back("C", c);
  d.emplace_back("OUT_STORE", glsl_storage_type(out));
  d.emplace_back("OUT_ALIGN", std::to_string(dtype_size(out)));
  d.emplace_back("STORE_OUT(v)", glsl_store(out));
  const char* names[] = {"A", "B", "CC"};
  for (size_t i = 0; i < in.size(); ++i) {
    std::string n = names[i];
    d.emplace_back(n + "_STORE", glsl_storage_type(in[i]));
    d.emplace_back(n + "_ALIGN", std::to_string(dtype_size(in[i])));
    d.emplace_back("LOAD_" + n + "(x)", glsl_load(in[i], load_types[i]));
  }
  d.emplace_back(in.size() == 3 ? "OP(a,b,c)" : in.size() == 2 ? "OP(a,b)" : "OP(a)", expr);
  d.emplace_back("VEC4", vec4 ? "1" : "0");
  if (vec4) {
    d.emplace_back("OUT_VEC", glsl_vec4_type(out));
    d.emplace_back("OUT_VALIGN", std::to_string(vec4_alignment(out)));
    // f16 results leave registers as one vector conversion (see glsl_vec4_register_type), after
    // the same float rounding step as the scalar store.
    if (out == DType::F16) d.emplace_back("OUT_VEC_OF(r0,r1,r2,r3)", "f16vec4(vec4(float(r0), float(r1), float(r2), float(r3)))");
    for (size_t i = 0; i < in.size(); ++i) {
      std::string n = names[i];
      d.emplace_back(n + "_VEC", glsl_vec4_type(in[i]));
      d.emplace_back(n + "_VREG", glsl_vec4_register_type(in[i]));
      d.emplace_back(n + "_SREG", glsl_scalar_register_type(in[i]));
      d.emplace_back(n + "_VALIGN", std::to_string(vec4_alignment(in[i])));
    }
  }
  return key;
}

// Records `key` over `out` with `views` (inputs already broadcast to out's shape).
void record_elementwise(Device& device, const Tensor& out, const std::vector<Tensor>& views, const Kernel& kernel,
                        bool dense) {
  auto& impl = device.impl();
  vk::PipelineLayout layout = impl.kernels.layout();
  impl.stream.record([&](Recorder& rec) {
    for (const auto& v : views) rec.use(v.buffer, Access::Read);
    rec.use(out.buffer, Access::Write);
    const auto& cmd = rec.cmd();
    cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *kernel.pipeline);
    if (views.size() <= 2) {
      plan_elementwise(out, views, dense, [&](ElementwisePush& p) {
        cmd.pushConstants<ElementwisePush>(layout, vk::ShaderStageFlagBits::eCompute, 0, p);
        cmd.dispatch(workgroups_for(*impl.core, p.n, kernel.workgroup_size, kernel.max_workgroups), 1, 1);
        rec.count_command();
      });
    } else {
      plan_elementwise3(out, views, dense, [&](Elementwise3Push& p) {
        cmd.pushConstants<Elementwise3Push>(layout, vk::ShaderStageFlagBits::eCompute, 0, p);
        cmd.dispatch(workgroups_for(*impl.core, p.n, kernel.workgroup_size, kernel.max_workgroups), 1, 1);
        rec.count_command();
      });
    }
  });
}

Tensor run_elementwise(const OpCall& call) {
  if ((call.op == "as_type" || call.op == "bitcast") && call.inputs[0].type == call.out.type) return call.inputs[0];
  for (const auto& t : call.inputs) check_broadcastable(t, call.out.shape, call.op);
  if (call.op == "bitcast") {
    if (!call.inputs[0].buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
    Tensor view = call.inputs[0];  // same bits, same element size: a view under the new type
    view.type = call.out.type;
    return view;
  }
  Tensor out = empty(call.device, call.out.type, call.out.shape);
  if (out.size() == 0) return out;
  std::vector<Tensor> views;
  std::vector<DType> types;
  for (const auto& t : call.inputs) {
    if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
    views.push_back(broadcast_view(t, call.out.shape));
    types.push_back(t.type);
  }
  bool dense = all_dense(views);
  // Four-wide loads and stores where every dense operand starts 4-element aligned.
  bool vec4 = dense && views.size() <= 2 && !glsl_vec4_type(call.out.type).empty() && std::getenv("NX_VULKAN_NO_VEC4") == nullptr;
  for (const auto& v : views) {
    if (glsl_vec4_type(v.type).empty()) vec4 = false;
    bool scalar = v.size() == 1 || std::all_of(v.strides.begin(), v.strides.end(), [](int64_t x) { return x == 0; });
    if (!scalar && v.offset % 4 != 0) vec4 = false;
  }
  // A short memo key first: building the full specialisation costs more than a small op.
  std::string memo(call.op);
  memo += char(call.out.type);
  for (DType t : types) memo += char(t);
  memo += dense ? (vec4 ? 'v' : 'd') : 's';
  const Kernel& kernel = call.device.impl().kernels.get_memo(
      memo, [&] { return make_key(call.op, call.out.type, types, dense, vec4, call.device.has(kCapFloat64)); });
  record_elementwise(call.device, out, views, kernel, dense);
  return out;
}

}  // namespace

void register_elementwise_ops() {
  for (const auto& [name, def] : elementwise_defs()) register_op(name, OpImpl{check_elementwise, run_elementwise});
  register_op("as_type", OpImpl{check_elementwise, run_elementwise});
  register_op("bitcast", OpImpl{check_elementwise, run_elementwise});
}

Tensor contiguous(Device& device, const Tensor& t) {
  if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
  if (t.is_contiguous() && t.offset == 0) return t;
  Tensor out = empty(device, t.type, t.shape);
  if (out.size() == 0) return out;
  std::vector<Tensor> views{t};
  bool dense = all_dense(views);
  // A bit copy: storage type in and out, so NaN payloads and bf16 patterns survive.
  FeatureSet features;
  features.add_type(t.type);
  features.check(*device.impl().core, "copy");
  std::string memo = std::string("\x01copy") + char(t.type) + (dense ? 'd' : 's');
  const Kernel& kernel = device.impl().kernels.get_memo(memo, [&] {
    KernelKey key{"elementwise", {}, kWorkgroupSize};
    features.add_defines(key.defines);
    std::string st = glsl_storage_type(t.type), align = std::to_string(dtype_size(t.type));
    key.defines.insert(key.defines.end(), {{"NIN", "1"}, {"LINEAR", dense ? "1" : "0"}, {"C", st}, {"OUT_STORE", st},
                                           {"OUT_ALIGN", align}, {"STORE_OUT(v)", "(v)"}, {"A_STORE", st},
                                           {"A_ALIGN", align}, {"LOAD_A(x)", "(x)"}, {"OP(a)", "(a)"}});
    return key;
  });
  record_elementwise(device, out, views, kernel, dense);
  return out;
}

}  // namespace nxv
