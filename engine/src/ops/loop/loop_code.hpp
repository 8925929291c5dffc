// The loop kernel's code generator (ops/loop/loop_kernel.cpp compiles a loop with it; products
// and reductions in loop_sums.cpp). A loop whose body is small runs every trip (a fixed count,
// or until its condition fails) in one dispatch of one workgroup (loop_kernel.comp), one per
// chain of a vectorized state. The body's graph passes through the passes that keep the bits
// of its ops run one by one (simplification, duplicates, elementwise chains); then each node
// becomes a phase of the generated code:
//   * an elementwise chain computes its elements with the chain's own functions (the code the
//     elementwise kernel runs), invocation t taking elements t, t + 256, ...;
//   * a view (reshape, broadcast, transpose, squeeze, a static slice) computes nothing: its
//     consumers read its source through the view's strides, as the eager kernels do;
//   * a product that the eager path runs as one matrix-vector product sums each element as
//     that kernel does (ops/dot/dot_in_workgroup.hpp): a row's lanes held in registers by one
//     invocation or a few (as many as one pass of the workgroup gives each row), each lane's
//     share summed in order, the lanes combined in the kernel's pairwise order (in registers,
//     then by subgroup shuffles); where a row's lanes do not fit, every share into shared
//     memory first;
//   * a reduction (sum, product, max, min, all, any) folds and combines as its eager kernel's
//     passes do (ops/reduce/reduce_in_workgroup.hpp): each lane's fold in order, then the lanes
//     level by level (the subgroup shuffles' pairs, then the shared-memory tree's);
//   * values computed when the loop compiles (constants no chain took, iota) are read from
//     their buffers.
// A barrier separates two phases only where the later one reads or writes what the earlier
// one touched at another invocation's element (an elementwise phase after a product takes
// the product's rows at the invocations that summed them). Staged inputs' rows of an even
// length are padded by one element against bank conflicts. Values and the changing state live in shared
// memory; state the body passes through unchanged and the other inputs are read from their
// buffers. A trip ends by copying the next state over the state. Anything else (argmax and
// argmin, reduce/5, gathers, host steps, f16 and complex types, a body over the shared memory)
// is refused with the reason, and the caller records the trips instead.
#pragma once
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "device/device_impl.hpp"
#include "graph/chain_fusion.hpp"
#include "graph/fold.hpp"
#include "graph/graph.hpp"
#include "graph/simplify.hpp"
#include "kernels/glsl_types.hpp"
#include "kernels/glsl_uses.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/dot/dot_in_workgroup.hpp"
#include "ops/elementwise/fusion.hpp"
#include "ops/family.hpp"
#include "ops/loop/loop_nodes.hpp"
#include "ops/loop/loop_push.h"
#include "ops/reduce/folds.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/reduce/reduce_in_workgroup.hpp"
#include "ops/shape/shape_attrs.hpp"

namespace nxv::loop {

constexpr uint32_t kWorkgroup = 256;
// Elementwise passes over a value that a phase unrolls at most (loop_over).
constexpr uint64_t kUnrolledPasses = 16;
// Partial sums a product holds in shared memory at once (its rows in chunks beyond).
constexpr uint32_t kPartials = 2048;
// A product's lanes one invocation holds in registers at most (more: partial sums in shared memory).
constexpr uint32_t kLanesPerThread = 16;
// Nodes over values known when the loop compiles are computed then up to this size each.
constexpr uint64_t kMaxFixedBytes = 4096;

// The type a shared array holds values of `t` in (8- and 16-bit integers widened).
inline DType kept_type(DType t) {
  switch (t) {
    case DType::U8: case DType::U16: return DType::U32;
    case DType::S8: case DType::S16: return DType::S32;
    default: return t;
  }
}

inline std::string u(uint64_t x) { return std::to_string(x) + "u"; }

// Where a value's elements are: a buffer (its push-constant address) or a shared array; read
// through `view`'s shape, strides and offset.
struct Ref {
  bool global = false;
  uint32_t index = 0;  // the address's position, or the shared array's
  Tensor view;         // no buffer: the layout only
  // Axis 0 is the chain axis (independent loops, one per workgroup): a shared array then holds
  // the workgroup's own chain only.
  bool batched = false;
};

struct SharedArray {
  DType type;  // the values' type (held as kept_type)
  int64_t size;  // elements declared
  // A staged input's rows of `row` elements held `pitch` apart (0: dense), so that invocations
  // reading down a column (a row each, or a product's k) touch different banks.
  uint32_t row = 0, pitch = 0;
};

class LoopCode {
 public:
  // `stage`: the inputs no trip changes are copied into shared memory before the first trip
  // (a trip's loads then wait on shared memory, not on the caches).
  LoopCode(Device& device, const Graph& g, size_t state, const std::vector<bool>& invariant,
           const std::vector<bool>& batched, int64_t chains, bool conditional, uint32_t addresses, bool stage)
      : device_(device), g_(g), state_(state), invariant_(invariant), batched_inputs_(batched), chains_(chains),
        conditional_(conditional), stage_(stage), has_f64_(device.has(kCapFloat64)), next_address_(addresses) {}

  // Generates the kernel's code; `fixed` gains the values computed now (with their addresses).
  void generate(std::vector<std::pair<uint32_t, Tensor>>& fixed) {
    refs_.resize(g_.value_count());
    std::vector<bool> known(g_.value_count(), false);
    for (uint32_t i = 0; i < g_.input_count(); ++i) {
      const OutSpec& s = g_.value(i);
      check_type(s.type, "an input");
      Tensor view = layout(s);
      if (!input_views_.empty()) {
        view.strides = input_views_[i].strides;
        view.offset = input_views_[i].offset;
      }
      const bool dense = view.offset == 0 && view.strides == row_major_strides(view.shape);
      bool batched = batched_inputs_[i];
      if (i < state_ && !invariant_[i]) {
        refs_[i] = Ref{false, array(s, batched), view, batched};
        state_arrays_.push_back({i, refs_[i]->index});
      } else if (stage_ && dense && read_by_a_node(i)) {
        refs_[i] = Ref{false, array(s, batched), view, batched};
        pad_rows(refs_[i]->index, s.shape, batched);
        staged_arrays_.push_back({i, refs_[i]->index});
      } else {
        refs_[i] = Ref{true, i, view, batched};
      }
    }
    std::vector<Tensor> values(g_.value_count());
    // Each value's last reader (node index); the state's next values and the condition are
    // read at the trip's end.
    last_use_.assign(g_.value_count(), 0);
    for (size_t n = 0; n < g_.nodes().size(); ++n)
      for (uint32_t x : g_.nodes()[n].inputs) last_use_[x] = std::max(last_use_[x], n);
    // A program stores each result that it computes into shared memory as soon as it is
    // computed: its array is then free once the body's own readers are done with it.
    const std::vector<size_t> read_in_body = last_use_;
    if (results_) {
      for (size_t j = 0; j < g_.outputs().size(); ++j) {
        if (next_address_ >= NXV_LOOP_MAX_BUFFERS) refuse("more than " + std::to_string(NXV_LOOP_MAX_BUFFERS) + " buffers");
        outputs_.emplace_back(-1, next_address_++);
      }
      stored_.assign(g_.outputs().size(), false);
    }
    for (uint32_t x : g_.outputs()) last_use_[x] = SIZE_MAX;
    for (size_t n = 0; n < g_.nodes().size(); ++n) {
      release_arrays_read_until(n);
      const GraphNode& node = g_.nodes()[n];
      const uint32_t v = uint32_t(g_.input_count() + n);
      check_type(node.out.type, op_info(node.op).name);
      bool all_known = std::all_of(node.inputs.begin(), node.inputs.end(), [&](uint32_t x) { return known[x]; });
      if (view_of(node, v)) {
        if (all_known && !node.inputs.empty()) {
          known[v] = true;
          values[v] = *family_of(node.op).view_result(node.op, node.out, {values[node.inputs[0]]}, node.attrs);
        }
        continue;
      }
      uint64_t bytes = uint64_t(shape_size(node.out.shape)) * dtype_size(node.out.type);
      if (all_known && bytes <= kMaxFixedBytes) {
        std::vector<Tensor> inputs;
        for (uint32_t x : node.inputs) inputs.push_back(values[x]);
        Tensor t = run_one_node(device_, node.op, node.out, inputs, node.attrs);
        Tensor dense = t.is_contiguous() && t.offset == 0 ? t : contiguous(device_, t);
        values[v] = dense;
        known[v] = true;
        if (next_address_ >= NXV_LOOP_MAX_BUFFERS) refuse("more than " + std::to_string(NXV_LOOP_MAX_BUFFERS) + " buffers");
        refs_[v] = Ref{true, next_address_, layout(node.out)};
        fixed.emplace_back(next_address_++, dense);
        continue;
      }
      if (node.op == OpId::dot) {
        product(node, v);
      } else if (is_reduction(node.op)) {
        reduction(node, v);
      } else if (node.op == OpId::pad) {
        pad(node, v);
      } else if (family_of(node.op).pointwise(node, g_)) {
        chain(node, v, n);
      } else {
        refuse(std::string(op_info(node.op).name) + " is not computed in a loop kernel yet");
      }
      if (results_ && refs_[v] && !refs_[v]->global) {
        bool stored = false;
        for (size_t j = 0; j < g_.outputs().size(); ++j)
          if (g_.outputs()[j] == v) store_result(j), stored = true;
        if (stored) last_use_[v] = read_in_body[v];
      }
    }
    if (results_) {
      for (size_t j = 0; j < g_.outputs().size(); ++j)
        if (!stored_[j]) store_result(j);
      return;
    }
    if (conditional_) stop_unless_condition();
    next_state();
  }

  // A program rather than a loop (ops/region/): no state, one trip, the graph's outputs stored
  // at their addresses at its end, and its inputs read through `views` (their strides and
  // offsets; none: row-major).
  void as_program(std::vector<Tensor> views = {}) {
    results_ = true;
    input_views_ = std::move(views);
  }

  // Bytes of shared memory the kernel declares.
  uint64_t shared_bytes() const {
    uint64_t shared = 0;
    for (const auto& a : arrays_) shared += uint64_t(a.size) * dtype_size(kept_type(a.type));
    for (const auto& [type, size] : raw_arrays_) shared += uint64_t(size) * acc_bytes(type);
    for (const auto& [acc, size] : partials_) shared += size * acc_bytes(acc);
    return shared;
  }
  bool fits_shared_memory() const { return shared_bytes() <= device_.impl().core->info().max_shared_memory; }

  // The kernel's source.
  KernelKey key() {
    FeatureSet features = features_;
    bool kernel_f64 = false;
    for (const auto& a : arrays_) kernel_f64 |= a.type == DType::F64;
    for (uint32_t i = 0; i < g_.value_count(); ++i) kernel_f64 |= g_.value(i).type == DType::F64;
    kernel_f64 |= uses_f64_;
    if (kernel_f64 && !float_steps_.empty())
      refuse("a step (" + float_steps_[0] + ") computes in float without f64 in a kernel that uses f64, whose float "
             "controls may change how the driver compiles it");
    std::string decls;
    for (size_t k = 0; k < arrays_.size(); ++k) {
      DType t = kept_type(arrays_[k].type);
      features.add_type(t);
      decls += "shared " + glsl_storage_type(t) + " nxv_a" + std::to_string(k) + "[" + std::to_string(arrays_[k].size) + "];\n";
    }
    for (size_t k = 0; k < raw_arrays_.size(); ++k) {
      const auto& [type, size] = raw_arrays_[k];
      decls += "shared " + glsl_name(type) + " nxv_r" + std::to_string(k) + "[" + std::to_string(size) + "];\n";
    }
    for (size_t k = 0; k < arrays_.size(); ++k)
      if (arrays_[k].pitch)
        decls += "#define NXV_PAD" + std::to_string(k) + "(i) (((i) / " + u(arrays_[k].row) + ") * " + u(arrays_[k].pitch) +
                 " + (i) % " + u(arrays_[k].row) + ")\n";
    for (const auto& [acc, size] : partials_)
      decls += "shared " + glsl_name(acc) + " nxv_part_" + glsl_name(acc) + "[" + std::to_string(size) + "];\n";
    if (!fits_shared_memory())
      refuse("its values need " + std::to_string(shared_bytes()) + " bytes of shared memory; the device has " +
             std::to_string(device_.impl().core->info().max_shared_memory));
    // The state's loads and stores name their buffers' types too.
    std::string state_in = load_state(), state_out = store_state(), addresses;
    for (uint32_t a : addresses_used_)
      addresses += "  const uvec2 nxv_addr" + std::to_string(a) + " = LoopParamsBuf(pc.params_addr).p.addr[" + std::to_string(a) + "];\n";
    std::string done_out;
    if (conditional_) {
      addresses += "  const uvec2 nxv_addr" + std::to_string(done_address_) + " = LoopParamsBuf(pc.params_addr).p.addr[" +
                   std::to_string(done_address_) + "];\n";
      done_out = "  if (c == 0u && t == 0u) NxvLoopBuf_u8(nxv_addr" + std::to_string(done_address_) +
                 ").v[0] = uint8_t(done ? 1u : 0u);\n";
    }
    std::string main = "void nxv_loop_main() {\n  const uint t = gl_LocalInvocationID.x, c = gl_WorkGroupID.x;\n" + addresses +
                       state_in + "  barrier();\n  bool done = false;\n  for (uint trip = 0u; trip < pc.trips; ++trip) {\n" +
                       body_ + "  }\n" + state_out + done_out + "}\n";
    std::string buffers;
    for (DType t : buffer_types_) features.add_type(t);
    for (DType t : buffer_types_)
      buffers += "layout(buffer_reference, std430, buffer_reference_align = " + std::to_string(dtype_size(t)) +
                 ") buffer NxvLoopBuf_" + std::string(dtype_name(t)) + " { " + glsl_storage_type(t) + " v[]; };\n";
    KernelKey key{.name = "loop_kernel", .workgroup_size = kWorkgroup};
    auto& d = key.defines;
    d.assign(defines_.begin(), defines_.end());
    d.emplace_back("NXV_SUBGROUP", uses_subgroup_ ? "1" : "0");
    features.add_defines(d);
    key.generated = buffers + chain_code_ + decls + main;
    GlslDefines scanned = d;
    scanned.emplace_back("", key.generated);
    auto uses = glsl_use_defines(scanned);
    d.insert(d.end(), uses.begin(), uses.end());
    return key;
  }

  // Per output of the loop: the input it passes through, or -1 (a buffer of its own, with the
  // address given).
  const std::vector<std::pair<int64_t, uint32_t>>& outputs() const { return outputs_; }
  uint32_t done_address() const { return done_address_; }
  uint32_t addresses() const { return next_address_; }

 private:
  void check_type(DType t, std::string_view what) {
    if (!supported_type(t))
      refuse(std::string(what) + " of type " + std::string(dtype_name(t)) + " (f16, bf16, f8 and complex types are not "
             "computed in a loop kernel yet)");
  }

  static Tensor layout(const OutSpec& s) {
    Tensor t;
    t.type = s.type;
    t.shape = s.shape;
    t.strides = row_major_strides(s.shape);
    return t;
  }

  uint32_t array(const OutSpec& s, bool batched) {
    if (shape_size(s.shape) == 0) refuse("an empty tensor");
    int64_t size = elements(s.shape, batched);
    // The smallest free array of the same storage that holds it (phase() puts a barrier between
    // its last readers and the new value's writers where they are other invocations): one no
    // phase since the last barrier touched, else a new one while shared memory is plentiful.
    auto touched = [&](uint32_t k) {
      const std::string name = "nxv_a" + std::to_string(k);
      return read_.count(name) > 0 || written_.count(name) > 0;
    };
    const bool plentiful =
        shared_bytes() + uint64_t(size) * dtype_size(kept_type(s.type)) <= device_.impl().core->info().max_shared_memory * 3 / 4;
    auto fit = free_arrays_.end();
    for (auto it = free_arrays_.begin(); it != free_arrays_.end(); ++it)
      if (kept_type(arrays_[*it].type) == kept_type(s.type) && arrays_[*it].size >= size && !(plentiful && touched(*it)) &&
          (fit == free_arrays_.end() || arrays_[*it].size < arrays_[*fit].size))
        fit = it;
    if (fit != free_arrays_.end()) {
      uint32_t k = *fit;
      free_arrays_.erase(fit);
      freed_[k] = false;
      return k;
    }
    arrays_.push_back({s.type, size});
    return uint32_t(arrays_.size() - 1);
  }

  // Frees the arrays of values computed by earlier nodes that no node from `n` on reads (views
  // of a value keep its array).
  void release_arrays_read_until(size_t n) {
    std::vector<size_t> last(arrays_.size(), 0);
    std::vector<bool> held(arrays_.size(), false);
    for (uint32_t v = uint32_t(g_.input_count()); v < refs_.size(); ++v) {
      if (!refs_[v] || refs_[v]->global) continue;
      uint32_t k = refs_[v]->index;
      held[k] = true;
      last[k] = std::max(last[k], last_use_[v]);
    }
    for (const auto& [input, k] : state_arrays_) held[k] = false;  // the state's, never freed
    for (const auto& [input, k] : staged_arrays_) held[k] = false;  // every trip reads the inputs
    for (uint32_t k = 0; k < arrays_.size(); ++k)
      if (held[k] && last[k] < n && !freed_[k]) freed_[k] = true, free_arrays_.push_back(k);
  }

  // Rows of an even length (bank conflicts where invocations read down a column) one element
  // apart; a padded array is read only through padded().
  void pad_rows(uint32_t k, const Shape& shape, bool batched) {
    if (shape.size() < (batched ? 3u : 2u) || shape.back() < 2 || shape.back() % 2 != 0) return;
    SharedArray& a = arrays_[k];
    a.row = uint32_t(shape.back());
    a.pitch = a.row + 1;
    a.size = a.size / a.row * a.pitch;
  }
  // Where element `index` of shared array k is.
  std::string padded(uint32_t k, const std::string& index) const {
    return arrays_[k].pitch ? "NXV_PAD" + std::to_string(k) + "(" + index + ")" : index;
  }
  int64_t logical_size(uint32_t k) const {
    const SharedArray& a = arrays_[k];
    return a.pitch ? a.size / a.pitch * a.row : a.size;
  }

  // The elements of a value one workgroup computes: its chain's, or all.
  int64_t elements(const Shape& shape, bool batched) const { return shape_size(shape) / (batched ? chains_ : 1); }

  // A view node: its value is its input's, seen through other strides.
  bool view_of(const GraphNode& node, uint32_t v) {
    if (node.inputs.size() != 1 || !refs_[node.inputs[0]]) return false;
    const Ref& in = *refs_[node.inputs[0]];
    auto view = family_of(node.op).view_result(node.op, node.out, {in.view}, node.attrs);
    if (!view && node.op == OpId::transpose) {
      // A permutation the eager path copies is read through permuted strides here.
      const auto& axes = node.attrs.as<ShapeAttrs>().axes;
      if (axes.size() != in.view.shape.size()) return false;
      view = in.view;
      for (size_t d = 0; d < axes.size(); ++d) {
        view->shape[d] = in.view.shape[size_t(axes[d])];
        view->strides[d] = in.view.strides[size_t(axes[d])];
      }
    }
    if (!view || view->type != in.view.type) return false;
    if (in.batched && (view->shape.empty() || view->shape[0] != chains_ || view->strides[0] != in.view.strides[0]))
      refuse(std::string(op_info(node.op).name) + " moves the chain axis (the vectorized axis)");
    refs_[v] = Ref{in.global, in.index, *view, in.batched};
    return true;
  }

  // GLSL reading element `index` of `r`, as its type's storage.
  std::string read(const Ref& r, const std::string& index) {
    DType t = r.view.type;
    if (r.global) {
      buffer_types_.insert(t);
      addresses_used_.insert(r.index);
      return "NxvLoopBuf_" + std::string(dtype_name(t)) + "(nxv_addr" + std::to_string(r.index) + ").v[" + index + "]";
    }
    return glsl_storage_type(t) + "(nxv_a" + std::to_string(r.index) + "[" + padded(r.index, index) + "])";
  }

  // The index into `r` of the element of a value of `shape` whose row-major index is `e`, with
  // `r` broadcast to `shape` as Nx broadcasts (trailing axes aligned, size-1 axes repeated).
  // In a `batched` value's phase, `e` counts the workgroup's chain's elements and axis 0 is the
  // chain `c`, which a shared array of a batched value leaves out (it holds one chain). Uses the
  // variables i1.. (i0..) that decompose(shape, batched) declares.
  static std::string index_of(const Ref& r, const Shape& shape, bool batched) {
    const Tensor& v = r.view;
    bool own = !r.global && r.batched;
    if (v.shape == shape && v.offset == 0 && v.strides == row_major_strides(shape) && (own || !batched)) return "e";
    std::string x = u(uint64_t(v.offset));
    size_t skip = shape.size() - v.shape.size();
    for (size_t d = 0; d < v.shape.size(); ++d) {
      if (v.shape[d] == 1 || v.strides[d] == 0) continue;
      bool chain = batched && d + skip == 0;
      if (chain && own) continue;
      x += " + " + (chain ? std::string("c") : "i" + std::to_string(d + skip)) + " * " + u(uint64_t(v.strides[d]));
    }
    return x;
  }

  static std::string decompose(const Shape& shape, bool batched) {
    std::string s = "      uint rest = e;\n";
    for (size_t d = shape.size(); d-- > (batched ? 1 : 0);) {
      s += "      uint i" + std::to_string(d) + " = rest % " + u(uint64_t(shape[d])) + ";\n";
      s += "      rest /= " + u(uint64_t(shape[d])) + ";\n";
    }
    return s;
  }

  static bool broadcasts_to(const Tensor& v, const Shape& shape) {
    if (v.shape.size() > shape.size()) return false;
    size_t skip = shape.size() - v.shape.size();
    for (size_t d = 0; d < v.shape.size(); ++d)
      if (v.shape[d] != 1 && v.shape[d] != shape[d + skip]) return false;
    return true;
  }

  // `store` (over v) into shared array k's element `index`.
  std::string store_into(uint32_t k, DType type, const std::string& index, const std::string& value) {
    std::string stored = glsl_store(type);
    stored.replace(stored.find('v'), 1, value);  // glsl_store's only `v` is its value
    return "nxv_a" + std::to_string(k) + "[" + index + "] = " + glsl_storage_type(kept_type(type)) + "(" + stored + ");\n";
  }

  // A shared array a phase reads or writes, and at which elements: 0, any; a stride s >= 1, its
  // own element only, invocation t touching element t / s where t is a multiple of s (s = 1:
  // elements t, t + 256, ...; s > 1: a product's rows, one per s invocations, in one pass).
  using Accesses = std::map<std::string, uint32_t>;

  // Appends a phase, after a barrier where it reads what a phase since the last barrier wrote,
  // or writes what one read or wrote, unless both touch only their own elements at one stride.
  void phase(const Accesses& reads, const Accesses& writes, const std::string& code) {
    auto conflicts = [](const Accesses& now, const Accesses& before) {
      return std::any_of(now.begin(), now.end(), [&](const auto& a) {
        auto b = before.find(a.first);
        return b != before.end() && !(a.second && a.second == b->second);
      });
    };
    if (conflicts(reads, written_) || conflicts(writes, written_) || conflicts(writes, read_)) {
      body_ += "    barrier();\n";
      written_.clear(), read_.clear();
    }
    auto note = [](const Accesses& from, Accesses& to) {
      for (const auto& [name, own] : from) {
        auto [it, fresh] = to.emplace(name, own);
        if (!fresh && it->second != own) it->second = 0;
      }
    };
    note(writes, written_);
    note(reads, read_);
    body_ += code;
  }

  static std::string name_of(const Ref& r) { return r.global ? "" : "nxv_a" + std::to_string(r.index); }

  static std::string loop_over(int64_t n, uint32_t stride = 1) {
    if (stride > 1)
      return "    for (uint e = t / " + u(stride) + "; t % " + u(stride) + " == 0u && e < " + u(uint64_t(n)) + "; e += " +
             u(kWorkgroup) + ") {\n";
    // A few passes as a loop of a known count, unrolled: the compiler can then issue every
    // pass's loads before the first is used, where a loop from t would wait on each in turn.
    const uint64_t passes = (uint64_t(n) + kWorkgroup - 1) / kWorkgroup;
    if (passes > 1 && passes <= kUnrolledPasses)
      return "    [[unroll]] for (uint nxv_pass = 0u; nxv_pass < " + u(passes) + "; ++nxv_pass) {\n      const uint e = t + nxv_pass * " +
             u(kWorkgroup) + ";\n" + (uint64_t(n) % kWorkgroup == 0 ? "" : "      if (e >= " + u(uint64_t(n)) + ") continue;\n");
    return "    for (uint e = t; e < " + u(uint64_t(n)) + "; e += " + u(kWorkgroup) + ") {\n";
  }
  // The stride an elementwise phase over n elements takes: that of an array it reads at its own
  // elements which a phase since the last barrier wrote at a stride above 1 (no barrier then),
  // where one pass covers them; else 1.
  uint32_t stride_for(const std::vector<std::pair<std::string, bool>>& reads, int64_t n) const {
    for (const auto& [name, own] : reads) {
      if (!own) continue;
      auto it = written_.find(name);
      if (it != written_.end() && it->second > 1 && uint64_t(n) * it->second <= kWorkgroup) return it->second;
    }
    return 1;
  }

  void chain(const GraphNode& node, uint32_t v, size_t n) {
    std::string why;
    std::optional<ElementwiseChain> steps = pointwise_steps(node, why);
    if (!steps) refuse(why);
    const ElementwiseChain& chain = *steps;
    if (chain.steps.empty()) refuse("an elementwise chain without steps");
    std::vector<DType> in;
    for (uint32_t x : node.inputs) in.push_back(g_.value(x).type);
    note_float_steps(chain, in);
    const std::string name = "nxv_c" + std::to_string(n);
    std::string code;
    ScalarExpr s = chain_scalar_expr(chain, in, has_f64_, code, name);
    chain_code_ += code;
    defines_.insert(s.defines.begin(), s.defines.end());
    features_.merge(s.features);
    bool batched = std::any_of(node.inputs.begin(), node.inputs.end(), [&](uint32_t x) { return refs_[x]->batched; });
    for (uint32_t x : node.inputs)
      if (refs_[x]->batched && refs_[x]->view.shape.size() != node.out.shape.size())
        refuse(std::string(op_info(node.op).name) + " broadcasts a vectorized operand along its chain axis");
    uint32_t k = array(node.out, batched);
    refs_[v] = Ref{false, k, layout(node.out), batched};
    std::string args, loads;
    std::vector<std::pair<std::string, bool>> shared_reads;  // an array, and whether at its own element
    bool indexed = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const Ref& r = *refs_[node.inputs[i]];
      if (!broadcasts_to(r.view, node.out.shape)) refuse("an elementwise operand that does not broadcast to its result");
      std::string index = index_of(r, node.out.shape, batched);
      if (!r.global) shared_reads.emplace_back(name_of(r), index == "e");
      indexed |= index != "e";
      loads += "      " + glsl_scalar_register_type(in[i]) + " x" + std::to_string(i) + " = " + read(r, index) + ";\n";
      args += (i ? ", x" : "x") + std::to_string(i);
    }
    const int64_t count = elements(node.out.shape, batched);
    const uint32_t stride = stride_for(shared_reads, count);
    Accesses reads;
    for (const auto& [name, own] : shared_reads) {
      auto [it, fresh] = reads.emplace(name, own ? stride : 0);
      if (!fresh && it->second != (own ? stride : 0)) it->second = 0;
    }
    phase(reads, {{name_of(*refs_[v]), stride}},
          loop_over(count, stride) + (indexed ? decompose(node.out.shape, batched) : "") + loads +
              "      precise " + s.compute + " r = " + name + "(" + args + ");\n      " +
              store_into(k, node.out.type, "e", "r") + "    }\n");
  }

  // The chain's steps that compute in float through several roundings without f64 (refused in
  // a kernel that uses f64: chain_rounding's rule, for the whole kernel).
  void note_float_steps(const ElementwiseChain& chain, const std::vector<DType>& in) {
    StepFloatControls c = step_float_controls(chain, in, has_f64_);
    uses_f64_ = uses_f64_ || c.uses_f64;
    float_steps_.insert(float_steps_.end(), c.float_steps.begin(), c.float_steps.end());
  }

  // Products and reductions (loop_sums.cpp): each element summed as its eager kernel sums it.
  // The subgroup size shuffles may assume (every subgroup of the workgroup that size, with
  // shuffles), or 0.
  uint32_t shuffle_size() const {
    const DeviceInfo& info = device_.impl().core->info();
    const uint32_t size = info.subgroup_size;
    bool fixed = size > 1 && info.min_subgroup_size == size && info.max_subgroup_size == size && kWorkgroup % size == 0;
    return fixed && info.features.subgroup_shuffle && info.features.subgroup_basic ? size : 0;
  }
  // A macro over (v, m): `acc`'s subgroupShuffleXor, for node `id`.
  std::string subgroup_shuffle(AccType acc, const std::string& id) {
    uses_subgroup_ = true;
    defines_.insert({"NXV_LOOP_SHUFFLE" + id + "(v, m)", shuffle_xor(acc)});
    return "NXV_LOOP_SHUFFLE" + id;
  }
  void product(const GraphNode& node, uint32_t v);
  void note_partials(AccType acc, uint64_t elements);
  void reduction(const GraphNode& node, uint32_t v);

  // Padding (negative too, and interior) as pad.comp computes it: each element finds the input
  // element it comes from, or takes the pad value.
  void pad(const GraphNode& node, uint32_t v) {
    const Ref& in = *refs_[node.inputs[0]];
    const Ref& value = *refs_[node.inputs[1]];
    if (in.batched || value.batched) refuse("pad of a vectorized value");
    // Conversions: none, or f32 widened to f64 (exact, as the eager conversion).
    auto converts = [&](DType from) {
      return from != node.out.type && !(from == DType::F32 && node.out.type == DType::F64);
    };
    if (converts(in.view.type) || converts(value.view.type))
      refuse(std::string("pad converting ") + std::string(dtype_name(in.view.type)) + " and " +
             std::string(dtype_name(value.view.type)) + " to " + std::string(dtype_name(node.out.type)));
    const std::string out_type = glsl_storage_type(node.out.type);
    const auto& padding = node.attrs.as<ShapeAttrs>().padding;
    const Shape& shape = node.out.shape;
    if (padding.size() != shape.size() || in.view.shape.size() != shape.size()) refuse("pad of another rank");
    const uint32_t k = array(node.out, false);
    refs_[v] = Ref{false, k, layout(node.out), false};
    const std::string at = u(uint64_t(in.view.offset));
    std::string code = loop_over(shape_size(shape)) + decompose(shape, false) + "      bool inside = true;\n      uint src = " + at + ";\n";
    for (size_t d = 0; d < shape.size(); ++d) {
      const std::string i = "i" + std::to_string(d), step = u(uint64_t(padding[d].interior + 1));
      code += "      { const int x = int(" + i + ") - (" + std::to_string(padding[d].low) + "); const uint q = uint(x) / " + step +
              "; inside = inside && x >= 0 && uint(x) == q * " + step + " && q < " + u(uint64_t(in.view.shape[d])) +
              "; src += q * " + u(uint64_t(in.view.strides[d])) + "; }\n";
    }
    code += "      nxv_a" + std::to_string(k) + "[e] = " + glsl_storage_type(kept_type(node.out.type)) + "(inside ? " + out_type +
            "(" + read(in, "(inside ? src : " + at + ")") + ") : " + out_type + "(" + read(value, u(uint64_t(value.view.offset))) +
            "));\n    }\n";
    if (node.out.type == DType::F64) uses_f64_ = true;
    Accesses reads;
    for (const Ref* r : {&in, &value})
      if (!r->global) reads[name_of(*r)] = 0;
    phase(reads, {{name_of(*refs_[v]), 1}}, code);
  }

  // A conditional loop's trip ends here where its condition (output `state`, one element of
  // the state the trip started from) is zero: the state stays, and the loop says it is done.
  void stop_unless_condition() {
    const Ref& pred = *refs_[g_.outputs()[state_]];
    if (pred.batched) refuse("a vectorized loop condition (each chain its own trips)");
    if (shape_size(pred.view.shape) != 1) refuse("a loop condition of more than one element");
    Accesses reads;
    if (!pred.global) reads[name_of(pred)] = false;
    phase(reads, {}, "");
    if (!pred.global && written_.count(name_of(pred))) {
      body_ += "    barrier();\n";
      written_.clear(), read_.clear();
    }
    std::string value = read(pred, u(uint64_t(pred.view.offset)));
    body_ += "    if (!(" + value + " != " + glsl_storage_type(pred.view.type) + "(0))) {\n      done = true;\n      break;\n    }\n";
    if (next_address_ >= NXV_LOOP_MAX_BUFFERS) refuse("more than " + std::to_string(NXV_LOOP_MAX_BUFFERS) + " buffers");
    done_address_ = next_address_++;
    buffer_types_.insert(DType::U8);
  }

  // The trip's end: each changing state's next value (copied first where it is not a value of
  // its own, such as a state or a view), then copied over the state.
  void next_state() {
    std::vector<std::pair<uint32_t, uint32_t>> copies;  // state array, source array
    for (size_t j = 0; j < state_; ++j) {
      const uint32_t out = g_.outputs()[j];
      if (invariant_[j]) {
        outputs_.emplace_back(int64_t(j), 0);
        continue;
      }
      const OutSpec& spec = g_.value(uint32_t(j));
      const Ref& r = *refs_[out];
      const bool batched = batched_inputs_[j];
      if (r.batched && !batched) refuse("a state that is not vectorized gets a vectorized next value");
      uint32_t state_array = refs_[j]->index;
      bool own = !r.global && arrays_[r.index].pitch == 0 && r.batched == batched && r.view.offset == 0 && r.view.shape == spec.shape &&
                 r.view.strides == row_major_strides(spec.shape) &&
                 std::none_of(state_arrays_.begin(), state_arrays_.end(), [&](auto& p) { return p.second == r.index; });
      uint32_t source = r.index;
      if (!own) {
        source = array(spec, batched);
        if (!broadcasts_to(r.view, spec.shape)) refuse("a next state that does not broadcast to its state");
        std::string index = index_of(r, spec.shape, batched);
        const int64_t count = elements(spec.shape, batched);
        const uint32_t stride = !r.global ? stride_for({{name_of(r), index == "e"}}, count) : 1;
        Accesses reads;
        if (!r.global) reads[name_of(r)] = index == "e" ? stride : 0;
        phase(reads, {{"nxv_a" + std::to_string(source), stride}},
              loop_over(count, stride) + (index != "e" ? decompose(spec.shape, batched) : "") + "      nxv_a" +
                  std::to_string(source) + "[e] = " + glsl_storage_type(kept_type(spec.type)) + "(" + read(r, index) +
                  ");\n    }\n");
      }
      copies.emplace_back(state_array, source);
      if (next_address_ >= NXV_LOOP_MAX_BUFFERS) refuse("more than " + std::to_string(NXV_LOOP_MAX_BUFFERS) + " buffers");
      outputs_.emplace_back(-1, next_address_++);
    }
    for (auto [to, from] : copies) {
      const std::string name = "nxv_a" + std::to_string(from);
      const uint32_t stride = stride_for({{name, true}}, arrays_[to].size);
      phase({{name, stride}}, {{"nxv_a" + std::to_string(to), stride}}, loop_over(arrays_[to].size, stride) + "      nxv_a" + std::to_string(to) + "[e] = nxv_a" + std::to_string(from) +
                "[e];\n    }\n");
    }
    // The next trip reads the state: every trip ends with a barrier.
    body_ += "    barrier();\n";
    written_.clear(), read_.clear();
  }

  // A program's output j copied from where it is (a shared array, an input or a view of either)
  // into its own buffer, whose address (the inputs' followed by the outputs' in order) was
  // assigned when generation began.
  void store_result(size_t j) {
    const uint32_t out = g_.outputs()[j];
    const OutSpec& spec = g_.value(out);
    check_type(spec.type, "an output");
    if (shape_size(spec.shape) == 0) refuse("an empty output");
    const uint32_t address = outputs_[j].second;
    const Ref& r = *refs_[out];
    std::string index = index_of(r, spec.shape, false);
    const int64_t count = shape_size(spec.shape);
    const uint32_t stride = !r.global ? stride_for({{name_of(r), index == "e"}}, count) : 1;
    Accesses reads;
    if (!r.global) reads[name_of(r)] = index == "e" ? stride : 0;
    buffer_types_.insert(spec.type);
    addresses_used_.insert(address);
    phase(reads, {},
          loop_over(count, stride) + (index != "e" ? decompose(spec.shape, false) : "") + "      NxvLoopBuf_" +
              std::string(dtype_name(spec.type)) + "(nxv_addr" + std::to_string(address) + ").v[e] = " +
              glsl_storage_type(spec.type) + "(" + read(r, index) + ");\n    }\n");
    stored_[j] = true;
  }

  bool read_by_a_node(uint32_t input) const {
    return std::any_of(g_.nodes().begin(), g_.nodes().end(), [&](const GraphNode& node) {
      return std::find(node.inputs.begin(), node.inputs.end(), input) != node.inputs.end();
    });
  }

  // The changing state's and the staged inputs' shared arrays, filled from their buffers.
  std::string load_state() {
    std::string s;
    std::vector<std::pair<uint32_t, uint32_t>> loaded = state_arrays_;
    loaded.insert(loaded.end(), staged_arrays_.begin(), staged_arrays_.end());
    for (auto [input, k] : loaded) {
      Ref r{true, input, layout(g_.value(input))};
      const int64_t size = logical_size(k);
      std::string index = batched_inputs_[input] ? "c * " + u(uint64_t(size)) + " + e" : "e";
      s += loop_over(size) + "      nxv_a" + std::to_string(k) + "[" + padded(k, "e") + "] = " +
           glsl_storage_type(kept_type(arrays_[k].type)) + "(" + read(r, index) + ");\n    }\n";
    }
    return s;
  }

  std::string store_state() {
    std::string s;
    for (size_t j = 0; j < state_; ++j) {
      if (invariant_[j]) continue;
      uint32_t k = refs_[j]->index, address = outputs_[j].second;
      DType t = arrays_[k].type;
      buffer_types_.insert(t);
      // A state of every chain is each workgroup's to store; one of none, the first's.
      bool batched = batched_inputs_[j];
      std::string index = batched ? "c * " + u(uint64_t(arrays_[k].size)) + " + e" : "e";
      addresses_used_.insert(address);
      s += std::string(batched ? "" : "  if (c == 0u)\n") + loop_over(arrays_[k].size) + "      NxvLoopBuf_" +
           std::string(dtype_name(t)) + "(nxv_addr" + std::to_string(address) + ").v[" + index + "] = " +
           glsl_storage_type(t) + "(nxv_a" + std::to_string(k) + "[e]);\n    }\n";
    }
    return s;
  }

  Device& device_;
  const Graph& g_;
  size_t state_;
  std::vector<bool> invariant_;
  std::vector<bool> batched_inputs_;
  int64_t chains_;
  bool conditional_;
  bool stage_;
  bool results_ = false;
  std::vector<Tensor> input_views_;
  uint32_t done_address_ = 0;
  bool has_f64_;
  uint32_t next_address_;
  std::vector<std::optional<Ref>> refs_;
  std::vector<SharedArray> arrays_;
  std::vector<size_t> last_use_;     // per value: the last node that reads it
  std::vector<uint32_t> free_arrays_;  // arrays no later node reads
  std::map<uint32_t, bool> freed_;     // arrays in free_arrays_
  std::vector<std::pair<uint32_t, uint32_t>> state_arrays_;  // input, its shared array
  std::vector<std::pair<uint32_t, uint32_t>> staged_arrays_;  // inputs no trip changes, in shared memory
  std::vector<std::pair<int64_t, uint32_t>> outputs_;
  std::vector<bool> stored_;  // a program's outputs already stored
  std::set<DType> buffer_types_;
  std::map<AccType, uint64_t, AccByGlslName> partials_;  // partial sums' shared arrays: type, elements
  std::set<std::pair<std::string, std::string>> defines_;
  FeatureSet features_;
  bool uses_f64_ = false;
  bool uses_subgroup_ = false;
  std::vector<std::string> float_steps_;
  std::string chain_code_, body_;
  Accesses written_, read_;  // shared arrays since the last barrier
  std::set<uint32_t> addresses_used_;
  std::vector<std::pair<AccType, uint64_t>> raw_arrays_;  // a reduction's partials: type, elements
};

}  // namespace nxv::loop
