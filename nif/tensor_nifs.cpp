// Tensors: upload, download, deallocate, copy, and the op entry point.
#include <algorithm>
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
#include "nxv/ops.hpp"
#include "resource_types.hpp"
#include "tensor_resource.hpp"
#include "term_attrs.hpp"
#include "terms.hpp"

namespace nxv_nif {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw nxv::Error(nxv::ErrorKind::InvalidArgument, message);
}

std::vector<HeldTensor> get_tensors(ErlNifEnv* env, ERL_NIF_TERM list) {
  std::vector<HeldTensor> tensors;
  unsigned length = 0;
  if (!enif_get_list_length(env, list, &length)) invalid("expected a list of tensor references");
  tensors.reserve(length);
  ERL_NIF_TERM head, tail = list;
  while (enif_get_list_cell(env, tail, &head, &tail)) tensors.push_back(get_tensor(env, head));
  return tensors;
}

}  // namespace

// from_binary(device_index, type, shape, binary) -> {:ok, ref}
ERL_NIF_TERM from_binary_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    nxv::DType type = get_dtype(env, argv[1]);
    nxv::Shape shape = get_shape(env, argv[2]);
    ErlNifBinary bin;
    if (!enif_inspect_binary(env, argv[3], &bin)) invalid("expected a binary of tensor data");
    size_t expected = static_cast<size_t>(nxv::shape_size(shape)) * nxv::dtype_size(type);
    if (bin.size != expected)
      invalid("binary has " + std::to_string(bin.size) + " bytes, the tensor needs " +
              std::to_string(expected));
    auto device = device_at(index);
    nxv::Tensor tensor = nxv::from_host(*device, type, shape, bin.data, bin.size);
    return make_ok(env, make_tensor_term(env, std::move(tensor), index));
  });
}

namespace {

// A download this small is first tried on the normal scheduler, waiting at most kBriefWaitNs
// for the GPU: a small op's result is usually ready within one round trip, and a dirty
// scheduler's hop would add to it.
constexpr size_t kBriefDownloadBytes = 64 * 1024;
constexpr uint64_t kBriefWaitNs = 200'000;

// Returns the binary, or sets `blocked` where only a dirty scheduler may go on.
ERL_NIF_TERM to_binary_term(ErlNifEnv* env, const ERL_NIF_TERM argv[], bool may_block, bool& blocked) {
  auto [tensor, index] = get_tensor(env, argv[0]);
  auto device = may_block ? device_at(index) : device_if_open(index);
  if (!device) return blocked = true, atoms.ok;
  int64_t limit = get_int64(env, argv[1], "limit");
  int64_t size = tensor.size();
  int64_t count = limit < 0 ? size : std::min(limit, size);
  if (count == 0) return make_ok(env, make_binary(env, {}));
  if (count < size && tensor.is_contiguous()) {
    nxv::Tensor flat = nxv::reshape_view(tensor, {size});
    tensor = nxv::slice_view(flat, {0}, {count}, {1});
  }
  size_t bytes = static_cast<size_t>(tensor.size()) * nxv::dtype_size(tensor.type);
  // A strided view needs a kernel (maybe a compile) first: not on a normal scheduler.
  if (!may_block && (bytes > kBriefDownloadBytes || !tensor.is_contiguous())) return blocked = true, atoms.ok;
  ErlNifBinary bin;
  if (!enif_alloc_binary(bytes, &bin)) throw std::bad_alloc();
  try {
    if (may_block) {
      nxv::to_host(*device, tensor, bin.data, bytes);
    } else if (!nxv::try_to_host(*device, tensor, bin.data, bytes, kBriefWaitNs)) {
      enif_release_binary(&bin);
      return blocked = true, atoms.ok;
    }
  } catch (...) {
    enif_release_binary(&bin);
    throw;
  }
  size_t keep = static_cast<size_t>(count) * nxv::dtype_size(tensor.type);
  if (keep < bytes && !enif_realloc_binary(&bin, keep)) {
    enif_release_binary(&bin);
    throw std::bad_alloc();
  }
  return make_ok(env, enif_make_binary(env, &bin));
}

ERL_NIF_TERM to_binary_blocking_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  return guard(env, [&] { return to_binary_term(env, argv, true, blocked); });
}

}  // namespace

// to_binary(ref, limit) -> {:ok, binary}: the first min(limit, size) elements, row-major, byte
// for byte as the device holds them. Small downloads wait briefly on the normal scheduler, the
// rest (and those the GPU keeps longer) on a dirty one.
ERL_NIF_TERM to_binary_nif(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  ERL_NIF_TERM done = guard(env, [&] { return to_binary_term(env, argv, false, blocked); });
  if (!blocked) return done;
  return enif_schedule_nif(env, "to_binary", ERL_NIF_DIRTY_JOB_IO_BOUND, to_binary_blocking_nif, argc, argv);
}

// deallocate(ref) -> :ok | :already_deallocated
ERL_NIF_TERM deallocate_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    return deallocate(get_resource(env, argv[0])) ? atoms.ok : atoms.already_deallocated;
  });
}

// deallocated?(ref) -> boolean
ERL_NIF_TERM deallocated_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    TensorResource& resource = get_resource(env, argv[0]);
    std::lock_guard<std::mutex> lock(resource.mutex);
    return resource.tensor ? atoms.false_ : atoms.true_;
  });
}

// copy(ref, device_index) -> {:ok, ref}: a new buffer with the same contents (any device).
ERL_NIF_TERM copy_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    auto [tensor, from] = get_tensor(env, argv[0]);
    int64_t index = get_int64(env, argv[1], "device");
    std::vector<std::byte> bytes = nxv::to_host(*device_at(from), tensor);
    auto device = device_at(index);
    nxv::Tensor copy = nxv::from_host(*device, tensor.type, tensor.shape, bytes.data(), bytes.size());
    return make_ok(env, make_tensor_term(env, std::move(copy), index));
  });
}

nxv::OpId get_op(ErlNifEnv* env, ERL_NIF_TERM term) {
  int64_t id = get_int64(env, term, "op id");
  if (id < 0 || size_t(id) >= nxv::op_table().size()) invalid("unknown op id " + std::to_string(id));
  return nxv::OpId(id);
}

// op(device_index, op_id, out_type, out_shape, [ref], options) -> {:ok, ref}. The op id is
// the row of the op table (op_table/0); options are decoded once into the family's attributes.
// Runs on a normal scheduler when recording is all it takes (the device is open, every kernel
// it needs is compiled); otherwise it continues on a dirty scheduler (op_blocking).
namespace {

// An op lowered on a normal scheduler whose run blocks (a host step that waits for the GPU),
// handed to a dirty one to run without lowering it again.
struct PreparedResource {
  std::shared_ptr<nxv::PreparedOp> op;
  int64_t device_index = 0;
  std::weak_ptr<nxv::Device> device;
};

ErlNifResourceType* prepared_type = nullptr;

// Returns the result; sets `blocked` (and returns a placeholder) where only a dirty
// scheduler may go on, and `prepared` where the op was lowered and only its run blocks.
ERL_NIF_TERM run_op_term(ErlNifEnv* env, const ERL_NIF_TERM argv[], bool may_block, bool& blocked,
                         std::optional<ERL_NIF_TERM>* prepared = nullptr) {
  int64_t index = get_int64(env, argv[0], "device");
  nxv::OpId op = get_op(env, argv[1]);
  nxv::OutSpec out{get_dtype(env, argv[2]), get_shape(env, argv[3])};
  std::vector<HeldTensor> held = get_tensors(env, argv[4]);
  nxv::Attrs attrs = nxv::decode_attrs(op, TermAttrReader(env, argv[5]));
  auto device = may_block ? device_at(index) : device_if_open(index);
  if (!device) return blocked = true, atoms.ok;
  std::vector<nxv::Tensor> inputs;
  inputs.reserve(held.size());
  for (auto& input : held) {
    if (input.device_index != index)
      invalid("an input of " + std::string(nxv::op_info(op).name) + " lives on device " +
              std::to_string(input.device_index) + ", not on device " + std::to_string(index));
    inputs.push_back(std::move(input.tensor));
  }
  if (may_block) {
    // Compiling may recurse deeper than this dirty scheduler's stack allows; terms stay here.
    std::optional<nxv::Tensor> result;
    on_big_stack([&] { result = nxv::run_op(*device, op, out, inputs, attrs); });
    return make_ok(env, make_tensor_term(env, std::move(*result), index));
  }
  std::shared_ptr<nxv::PreparedOp> lowered;
  std::optional<nxv::Tensor> result = nxv::run_op_if_compiled(*device, op, out, inputs, attrs, &lowered);
  if (!result) {
    if (lowered && prepared) {
      void* memory = enif_alloc_resource(prepared_type, sizeof(PreparedResource));
      new (memory) PreparedResource{std::move(lowered), index, device};
      *prepared = enif_make_resource(env, memory);
      enif_release_resource(memory);
    }
    return blocked = true, atoms.ok;
  }
  return make_ok(env, make_tensor_term(env, std::move(*result), index));
}

ERL_NIF_TERM op_blocking_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  return guard(env, [&] { return run_op_term(env, argv, true, blocked); });
}

// op_prepared(resource): runs what op lowered (on a dirty scheduler).
ERL_NIF_TERM op_prepared_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    PreparedResource* res = nullptr;
    if (!enif_get_resource(env, argv[0], prepared_type, reinterpret_cast<void**>(&res)))
      invalid("expected a prepared op");
    auto device = device_at(res->device_index);
    if (res->device.lock() != device)
      throw nxv::Error(nxv::ErrorKind::DeviceLost, "the op's device was reopened before it ran");
    nxv::Tensor result = nxv::run_prepared(*device, *res->op);
    return make_ok(env, make_tensor_term(env, std::move(result), res->device_index));
  });
}

}  // namespace

bool open_prepared_resource_type(ErlNifEnv* env) {
  prepared_type = open_resource_type<PreparedResource>(env, "nx_vulkan_prepared_op");
  return prepared_type != nullptr;
}

ERL_NIF_TERM op_nif(ErlNifEnv* env, int argc, const ERL_NIF_TERM argv[]) {
  bool blocked = false;
  std::optional<ERL_NIF_TERM> prepared;
  ERL_NIF_TERM done = guard(env, [&] { return run_op_term(env, argv, false, blocked, &prepared); });
  if (!blocked) return done;
  if (prepared) {
    ERL_NIF_TERM args[] = {*prepared};
    return enif_schedule_nif(env, "op", ERL_NIF_DIRTY_JOB_IO_BOUND, op_prepared_nif, 1, args);
  }
  return enif_schedule_nif(env, "op", ERL_NIF_DIRTY_JOB_IO_BOUND, op_blocking_nif, argc, argv);
}

// op_table() -> {:ok, [{name, id, family, arity, depends}]}: the engine's op table
// (nxv/op_table.inc); `depends` lists what support answers depend on besides the types.
ERL_NIF_TERM op_table_nif(ErlNifEnv* env, int, const ERL_NIF_TERM[]) {
  return guard(env, [&] {
    std::vector<ERL_NIF_TERM> rows;
    for (const auto& row : nxv::op_table()) {
      uint32_t d = nxv::support_depends(row.id);
      std::vector<ERL_NIF_TERM> depends;
      if (d & nxv::kDependsOnRanks) depends.push_back(make_atom(env, "ranks"));
      if (d & nxv::kDependsOnShapes) depends.push_back(make_atom(env, "shapes"));
      if (d & nxv::kDependsOnLayouts) depends.push_back(make_atom(env, "layouts"));
      if (d & nxv::kDependsOnAttrs) depends.push_back(make_atom(env, "options"));
      rows.push_back(enif_make_tuple5(
          env, make_atom(env, std::string(row.name).c_str()), enif_make_int64(env, int64_t(row.id)),
          make_atom(env, std::string(row.family_name).c_str()), enif_make_int(env, row.arity),
          enif_make_list_from_array(env, depends.data(), unsigned(depends.size()))));
    }
    return make_ok(env, enif_make_list_from_array(env, rows.data(), unsigned(rows.size())));
  });
}

// check_op(device_index, op_id, out_type, out_shape, [{type, shape}], options) ->
// {:ok, true} | {:ok, {kind, reason}}: whether the op runs natively for inputs of these types
// and shapes (laid out contiguously), and why not.
ERL_NIF_TERM check_op_nif(ErlNifEnv* env, int, const ERL_NIF_TERM argv[]) {
  return guard(env, [&] {
    int64_t index = get_int64(env, argv[0], "device");
    nxv::OpId op = get_op(env, argv[1]);
    nxv::OutSpec out{get_dtype(env, argv[2]), get_shape(env, argv[3])};
    std::vector<nxv::TensorSpec> specs;
    ERL_NIF_TERM head, tail = argv[4];
    while (enif_get_list_cell(env, tail, &head, &tail)) {
      int arity = 0;
      const ERL_NIF_TERM* elems = nullptr;
      if (!enif_get_tuple(env, head, &arity, &elems) || arity != 2) invalid("expected {type, shape} input specs");
      specs.push_back(nxv::contiguous_spec(get_dtype(env, elems[0]), get_shape(env, elems[1])));
    }
    nxv::Attrs attrs = nxv::decode_attrs(op, TermAttrReader(env, argv[5]));
    auto device = device_at(index);
    nxv::Support support = nxv::check_op(*device, op, out, specs, attrs);
    if (support) return make_ok(env, atoms.true_);
    return make_ok(env, enif_make_tuple2(env, make_atom(env, nxv::error_kind_name(support.kind)),
                                         make_binary(env, support.reason)));
  });
}

}  // namespace nxv_nif
