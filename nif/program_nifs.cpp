// Programs (Nx.Vulkan.Compiler): a graph of op-table nodes compiled once from input specs,
// then run with one call and one recording per defn call.
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "big_stack.hpp"
#include "devices.hpp"
#include "guard.hpp"
#include "nifs.hpp"
#include "nxv/error.hpp"
#include "nxv/graph.hpp"
#include "resource_types.hpp"
#include "tensor_resource.hpp"
#include "term_attrs.hpp"
#include "terms.hpp"

namespace nxv_nif {

namespace {

struct ProgramResource {
  std::shared_ptr<const nxv::Program> program;
  int64_t device_index = 0;
  // The logical device its kernels belong to: after Nx.Vulkan.reopen_device/1 the index names
  // another, and the program must be compiled again.
  std::weak_ptr<nxv::Device> device;
};

// The message of the error a program of a reopened device raises (Nx.Vulkan.Compiler compiles
// again on it).
constexpr const char* kReopened = "this compiled program belongs to a device since reopened";

ErlNifResourceType* program_type = nullptr;

[[noreturn]] void invalid(const std::string& message) { throw nxv::Error(nxv::ErrorKind::InvalidArgument, message); }

const ERL_NIF_TERM* tuple_of(ErlNifEnv* env, ERL_NIF_TERM term, int arity, const char* what) {
  int got = 0;
  const ERL_NIF_TERM* elems = nullptr;
  if (!enif_get_tuple(env, term, &got, &elems) || got != arity) invalid(std::string("expected ") + what);
  return elems;
}

std::vector<ERL_NIF_TERM> list_of(ErlNifEnv* env, ERL_NIF_TERM list, const char* what) {
  unsigned length = 0;
  if (!enif_get_list_length(env, list, &length)) invalid(std::string("expected a list of ") + what);
  std::vector<ERL_NIF_TERM> items;
  items.reserve(length);
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) items.push_back(head);
  return items;
}

uint32_t value_id(ErlNifEnv* env, ERL_NIF_TERM term) {
  int64_t id = get_int64(env, term, "value id");
  if (id < 0 || id > int64_t(UINT32_MAX)) invalid("value id out of range");
  return uint32_t(id);
}

nxv::OpId op_id(ErlNifEnv* env, ERL_NIF_TERM term) {
  int64_t id = get_int64(env, term, "op id");
  if (id < 0 || size_t(id) >= nxv::op_table().size()) invalid("unknown op id " + std::to_string(id));
  return nxv::OpId(id);
}

ProgramResource& get_program(ErlNifEnv* env, ERL_NIF_TERM term) {
  void* object = nullptr;
  if (!enif_get_resource(env, term, program_type, &object)) invalid("expected a Vulkan program reference");
  return *static_cast<ProgramResource*>(object);
}

// A run of this many launches, or one that blocks, goes to a dirty scheduler.
constexpr size_t kNormalSchedulerLaunches = 512;

ERL_NIF_TERM run_term(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[], bool may_block, bool& blocked) {
  ProgramResource& resource = get_program(env, argv[0]);
  std::vector<nxv::Tensor> inputs;
  for (ERL_NIF_TERM ref : list_of(env, argv[1], "tensor references")) {
    HeldTensor held = get_tensor(env, ref);
    if (held.device_index != resource.device_index)
      invalid("a program input lives on device " + std::to_string(held.device_index) + ", the program on device " +
              std::to_string(resource.device_index));
    inputs.push_back(std::move(held.tensor));
  }
  std::optional<nxv::Tensor> gate;
  if (argc == 3) {
    HeldTensor held = get_tensor(env, argv[2]);
    if (held.device_index != resource.device_index) invalid("a program's gate lives on another device than the program");
    gate = std::move(held.tensor);
  }
  const nxv::Tensor* gate_ptr = gate ? &*gate : nullptr;
  const nxv::Program& program = *resource.program;
  if (!may_block && (program.stats().launches > kNormalSchedulerLaunches || !program.runs_without_blocking()))
    return blocked = true, atoms.ok;
  auto device = may_block ? device_at(resource.device_index) : device_if_open(resource.device_index);
  if (!device) return blocked = true, atoms.ok;
  if (resource.device.lock() != device)
    throw nxv::Error(nxv::ErrorKind::DeviceLost,
                     std::string(kReopened) + " (Nx.Vulkan.reopen_device/1): compile the function again");
  std::vector<nxv::Tensor> outputs;
  if (may_block) {
    on_big_stack([&] { outputs = gate_ptr ? program.run_gated(*device, inputs, *gate_ptr) : program.run(*device, inputs); });
  } else if (auto ran = program.run_if_compiled(*device, inputs, gate_ptr)) {
    outputs = std::move(*ran);
  } else {
    return blocked = true, atoms.ok;
  }
  std::vector<ERL_NIF_TERM> terms;
  terms.reserve(outputs.size());
  for (auto& t : outputs) terms.push_back(make_tensor_term(env, std::move(t), resource.device_index));
  return make_ok(env, enif_make_list_from_array(env, terms.data(), unsigned(terms.size())));
}

ERL_NIF_TERM program_run_blocking_nif(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  return guard(env, [&] { return run_term(env, argc, argv, true, blocked); });
}

}  // namespace

bool open_program_resource_type(ErlNifEnv* env) {
  program_type = open_resource_type<ProgramResource>(env, "nx_vulkan_program");
  return program_type != nullptr;
}

namespace {

// The graph of program_compile's and program_compile_loop's arguments 1 to 3.
nxv::Graph graph_of(ErlNifEnv* env, const ERL_NIF_TERM argv[]) {
  nxv::Graph graph;
  for (ERL_NIF_TERM spec : list_of(env, argv[1], "input specs")) {
    const ERL_NIF_TERM* e = tuple_of(env, spec, 2, "{type, shape} input specs");
    graph.input(get_dtype(env, e[0]), get_shape(env, e[1]));
  }
  for (ERL_NIF_TERM node : list_of(env, argv[2], "nodes")) {
    const ERL_NIF_TERM* e = tuple_of(env, node, 5, "{op_id, type, shape, inputs, options} nodes");
    nxv::OpId op = op_id(env, e[0]);
    nxv::OutSpec out{get_dtype(env, e[1]), get_shape(env, e[2])};
    std::vector<uint32_t> inputs;
    for (ERL_NIF_TERM v : list_of(env, e[3], "value ids")) inputs.push_back(value_id(env, v));
    graph.add(op, std::move(out), std::move(inputs), nxv::decode_attrs(op, TermAttrReader(env, e[4])));
  }
  for (ERL_NIF_TERM v : list_of(env, argv[3], "output value ids")) graph.output(value_id(env, v));
  return graph;
}

// {:ok, {ref, {nodes, fused, launches, in_place, run_bytes}}} for a compiled program.
ERL_NIF_TERM program_term(ErlNifEnv* env, std::shared_ptr<const nxv::Program> program, int64_t index,
                          std::shared_ptr<nxv::Device> device) {
  void* memory = enif_alloc_resource(program_type, sizeof(ProgramResource));
  if (memory == nullptr) throw std::bad_alloc();
  auto* resource = new (memory) ProgramResource{program, index, std::move(device)};
  ERL_NIF_TERM ref = enif_make_resource(env, resource);
  enif_release_resource(resource);
  const nxv::ProgramStats& s = program->stats();
  ERL_NIF_TERM stats =
      enif_make_tuple5(env, enif_make_uint64(env, s.nodes), enif_make_uint64(env, s.fused),
                       enif_make_uint64(env, s.launches), enif_make_uint64(env, s.in_place), enif_make_uint64(env, s.run_bytes));
  return make_ok(env, enif_make_tuple2(env, ref, stats));
}

}  // namespace

// program_compile(device, [{type, shape}], [{op_id, type, shape, [value_id], options}], [value_id],
//                 [{input_value_id, output_position}]) -> {:ok, {ref, {nodes, fused, launches, in_place, run_bytes}}}
// Values are numbered inputs first, then one per node in order; the last list donates inputs
// to outputs (Graph::donate). Compiles every kernel.
ERL_NIF_TERM program_compile_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    nxv::Graph graph = graph_of(env, argv);
    for (ERL_NIF_TERM d : list_of(env, argv[4], "donations")) {
      const ERL_NIF_TERM* e = tuple_of(env, d, 2, "{input, output} donations");
      graph.donate(value_id(env, e[0]), size_t(get_int64(env, e[1], "output position")));
    }
    auto device = device_at(index);
    std::shared_ptr<const nxv::Program> program;
    on_big_stack([&] { program = nxv::compile_program(*device, graph); });
    return program_term(env, std::move(program), index, device);
  });
}

// program_compile_loop(device, input specs, nodes, outputs, state, trips, vectorized, conditional):
// a loop's body (its first `state` inputs the state, its outputs the next state, then with
// `conditional` = 1 its condition) as one program that runs up to `trips` trips in one launch
// (nxv::compile_loop_program); `vectorized` lists the inputs whose axis 0 holds independent
// chains. {:error, :unsupported, why} where the body is not one workgroup's work.
ERL_NIF_TERM program_compile_loop_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    nxv::Graph graph = graph_of(env, argv);
    int64_t state = get_int64(env, argv[4], "state");
    int64_t trips = get_int64(env, argv[5], "trips");
    bool conditional = get_int64(env, argv[7], "conditional") != 0;
    if (state < 0 || trips < 1 || trips > int64_t(UINT32_MAX))
      throw nxv::Error(nxv::ErrorKind::InvalidArgument, "a loop needs a state count and from 1 to 2^32 - 1 trips");
    // None listed: the engine tries the changing state's axis 0 (nxv::compile_loop_program).
    std::vector<bool> vectorized;
    for (ERL_NIF_TERM v : list_of(env, argv[6], "vectorized inputs")) {
      vectorized.resize(graph.input_count(), false);
      uint32_t i = value_id(env, v);
      if (i >= graph.input_count()) throw nxv::Error(nxv::ErrorKind::InvalidArgument, "a vectorized input the body does not have");
      vectorized[i] = true;
    }
    auto device = device_at(index);
    std::shared_ptr<const nxv::Program> program;
    on_big_stack([&] {
      program = nxv::compile_loop_program(*device, graph, size_t(state), uint32_t(trips), vectorized, conditional);
    });
    return program_term(env, std::move(program), index, device);
  });
}

// program_gateable(program) -> {:ok, boolean}: whether runs of the program can be gated on the
// device (program_run/3): its device has conditional rendering and it has no host step.
ERL_NIF_TERM program_gateable_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    ProgramResource& resource = get_program(env, argv[0]);
    auto device = resource.device.lock();
    bool gateable = device && device->info().features.conditional_rendering && resource.program->runs_without_blocking();
    return make_ok(env, gateable ? atoms.true_ : atoms.false_);
  });
}

// program_run(program, [ref]) -> {:ok, [ref]}: one recording of every launch. Records on the
// normal scheduler unless it may block (an input to copy, a host step) or is long.
// program_run(program, [ref], gate_ref): the same gated on the device (nxv::Program::run_gated).
ERL_NIF_TERM program_run_nif(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  ERL_NIF_TERM done = guard(env, [&] { return run_term(env, argc, argv, false, blocked); });
  if (!blocked) return done;
  return enif_schedule_nif(env, "program_run", ERL_NIF_DIRTY_JOB_IO_BOUND, program_run_blocking_nif, argc, argv);
}

}  // namespace nxv_nif
