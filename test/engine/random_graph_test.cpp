// Compiled programs against their ops run one by one, on random graphs: elementwise ops of
// every arity (with constants, comparisons, select and conversions), reductions, products,
// transposes and broadcasts over f32, f64, f16 and s32 values of shapes that straddle
// workgroups, with random outputs and donations. Every graph pass (constants into chains,
// transposes into products, epilogues, chains, regions, dead nodes, the level schedule,
// donation in place) must leave each output with the bits of the ops run eagerly (NaN only as NaN). A
// failing graph prints its seed; NXV_RANDOM_GRAPHS=n runs more.
#include <cstdlib>
#include <functional>
#include <optional>

#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct Value {
  uint32_t id;
  DType type;
  Shape shape;
};

struct Node {
  OpId op;
  OutSpec out;
  std::vector<uint32_t> inputs;
  Attrs attrs;
};

class RandomGraph {
 public:
  RandomGraph(uint32_t seed) : rng_(seed) {
    const DType types[] = {DType::F32, DType::F64, DType::F16, DType::S32};
    type_ = types[pick(4)];
    m_ = 1 + int64_t(pick(70)), n_ = 1 + int64_t(pick(300)), k_ = 1 + int64_t(pick(40));
    // Inputs: two matrices, a matrix to multiply by, a row.
    for (const Shape& s : {Shape{m_, n_}, Shape{m_, n_}, Shape{n_, k_}, Shape{n_}}) {
      inputs_.push_back({graph_.input(type_, s), type_, s});
      values_.push_back(inputs_.back());
    }
    size_t nodes = 6 + pick(9);
    for (size_t i = 0; i < nodes; ++i) add_random_node();
    // The last node and up to two others, read back.
    outputs_.push_back(values_.back());
    for (size_t i = pick(3); i > 0; --i) outputs_.push_back(values_[inputs_.size() + pick(values_.size() - inputs_.size())]);
    for (const auto& v : outputs_) graph_.output(v.id);
    // Donate the first matrix to an output of its type and shape, where there is one.
    for (size_t o = 0; o < outputs_.size(); ++o)
      if (pick(2) && outputs_[o].type == type_ && outputs_[o].shape == inputs_[0].shape && outputs_[o].id != inputs_[0].id) {
        graph_.donate(inputs_[0].id, o);
        break;
      }
  }

  const Graph& graph() const { return graph_; }
  const std::vector<Value>& inputs() const { return inputs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Value>& outputs() const { return outputs_; }
  std::mt19937& rng() { return rng_; }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool is_float_type(DType t) const { return t == DType::F32 || t == DType::F64 || t == DType::F16; }

  Value add(OpId op, DType type, const Shape& shape, std::vector<uint32_t> inputs, Attrs attrs = {}) {
    nodes_.push_back({op, {type, shape}, inputs, attrs});
    values_.push_back({graph_.add(op, {type, shape}, std::move(inputs), attrs), type, shape});
    return values_.back();
  }

  // A value of `type` (and `shape`, where given) made so far; nullopt where there is none.
  std::optional<Value> any(DType type, const Shape* shape = nullptr) {
    std::vector<Value> c;
    for (const auto& v : values_)
      if (v.type == type && (!shape || v.shape == *shape)) c.push_back(v);
    if (c.empty()) return std::nullopt;
    return c[pick(c.size())];
  }

  Value constant(DType type) {
    const double values[] = {0.01, -2.5, 3.0, 0.5, 1e-3, -7.0};
    ShapeAttrs a;
    if (is_float_type(type)) a.value = AttrNumber{AttrNumber::Kind::Float, 0, 0, values[pick(6)], 0};
    else a.value = AttrNumber{AttrNumber::Kind::Int, int64_t(pick(9)) - 4, 0, 0, 0};
    return add(OpId::constant, type, {}, {}, Attrs::of(a));
  }

  // A second operand for `a`: a value of its shape, or a constant.
  Value operand_for(const Value& a) {
    if (pick(3) == 0) return constant(a.type);
    if (auto b = any(a.type, &a.shape)) return *b;
    return constant(a.type);
  }

  void add_random_node() {
    Value a = *any(type_);
    bool matrix = a.shape.size() == 2;
    switch (pick(9)) {
      case 0: {  // unary
        std::vector<OpId> ops{OpId::negate, OpId::abs};
        if (is_float_type(a.type)) ops.insert(ops.end(), {OpId::exp, OpId::tanh, OpId::sin, OpId::sqrt});
        add(ops[pick(ops.size())], a.type, a.shape, {a.id});
        return;
      }
      case 1:
      case 2: {  // binary
        std::vector<OpId> ops{OpId::add, OpId::subtract, OpId::multiply, OpId::max, OpId::min};
        if (is_float_type(a.type)) ops.push_back(OpId::divide);
        Value b = operand_for(a);
        bool swap = pick(2);
        add(ops[pick(ops.size())], a.type, a.shape, swap ? std::vector{b.id, a.id} : std::vector{a.id, b.id});
        return;
      }
      case 3: {  // select(a > b, a, c)
        Value b = operand_for(a), c = operand_for(a);
        Value p = add(OpId::greater, DType::U8, a.shape, {a.id, b.id});
        add(OpId::select, a.type, a.shape, {p.id, a.id, c.id});
        return;
      }
      case 4: {  // a conversion there and back
        DType other = a.type == DType::F64 ? DType::F32 : DType::F64;
        Value c = add(OpId::as_type, other, a.shape, {a.id});
        add(OpId::as_type, a.type, a.shape, {c.id});
        return;
      }
      case 5: {  // a reduction along one axis of a matrix
        if (!matrix) return add_random_node();
        ReduceAttrs r;
        r.all_axes = false;
        int64_t axis = int64_t(pick(2));
        r.axes = {axis};
        r.keep_axes = pick(2);
        Shape out = a.shape;
        if (r.keep_axes) out[size_t(axis)] = 1;
        else out.erase(out.begin() + axis);
        add(pick(2) ? OpId::sum : OpId::reduce_max, a.type, out, {a.id}, Attrs::of(r));
        return;
      }
      case 6: {  // a product by the {n, k} input, its result sometimes transposed
        Shape mn{m_, n_};
        auto x = any(type_, &mn);
        if (!x) return add_random_node();
        DotAttrs d;
        d.left_contract = {1}, d.right_contract = {0};
        Value p = add(OpId::dot, type_, {m_, k_}, {x->id, inputs_[2].id}, Attrs::of(d));
        if (pick(2)) {
          ShapeAttrs t;
          t.axes = {1, 0};
          add(OpId::transpose, type_, {k_, m_}, {p.id}, Attrs::of(t));
        }
        return;
      }
      case 7: {  // x^T . y over the m axis, transposed: Nx's gradient of a product
        Shape mn{m_, n_};
        auto x = any(type_, &mn), y = any(type_, &mn);
        if (!x || !y) return add_random_node();
        DotAttrs d;
        d.left_contract = {0}, d.right_contract = {0};
        Value p = add(OpId::dot, type_, {n_, n_}, {x->id, y->id}, Attrs::of(d));
        ShapeAttrs t;
        t.axes = {1, 0};
        add(OpId::transpose, type_, {n_, n_}, {p.id}, Attrs::of(t));
        return;
      }
      default: {  // the row broadcast to a matrix, then added
        ShapeAttrs b;
        b.axes = {1};
        Value r = add(OpId::broadcast, type_, {m_, n_}, {inputs_[3].id}, Attrs::of(b));
        Shape mn{m_, n_};
        add(OpId::add, type_, mn, {r.id, any(type_, &mn)->id});
        return;
      }
    }
  }

  std::mt19937 rng_;
  DType type_;
  int64_t m_, n_, k_;
  Graph graph_;
  std::vector<Value> inputs_, values_, outputs_;
  std::vector<Node> nodes_;
};

}  // namespace

TEST(RandomGraphs, ProgramsGiveTheBitsOfTheirOpsRunOneByOne) {
  auto dev = shared_device();
  const char* env = std::getenv("NXV_RANDOM_GRAPHS");
  uint32_t count = env && *env ? uint32_t(std::strtoul(env, nullptr, 10)) : 8;
  uint32_t first = uint32_t(std::random_device{}());
  for (uint32_t i = 0; i < 2 * count; ++i) {
    // Each graph twice: as the device's defaults compile it, and with its small nodes in
    // regions (graph/region_forming.hpp) on CPU drivers too.
    uint32_t seed = first + i / 2;
    std::optional<ScopedTuning> regions;
    if (i % 2) regions.emplace("program.region", "1");
    RandomGraph g(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(g.nodes().size()) + " nodes, " +
                 std::string(dtype_name(g.inputs()[0].type)) + (i % 2 ? ", regions" : ""));
    auto program = compile_program(*dev, g.graph());
    std::vector<Tensor> inputs, eager;
    for (const auto& v : g.inputs()) inputs.push_back(random_tensor(*dev, v.type, v.shape, g.rng()));
    // The eager values first: a donated input is given up by the run.
    eager = inputs;
    for (const auto& n : g.nodes()) {
      std::vector<Tensor> in;
      for (uint32_t v : n.inputs) in.push_back(eager[v]);
      eager.push_back(run_op(*dev, n.op, n.out, in, n.attrs));
    }
    std::vector<std::vector<std::byte>> want;
    for (const auto& o : g.outputs()) want.push_back(to_host(*dev, eager[o.id]));
    auto outs = program->run(*dev, inputs);
    ASSERT_EQ(outs.size(), g.outputs().size());
    for (size_t o = 0; o < outs.size(); ++o) {
      SCOPED_TRACE("output " + std::to_string(o));
      Tensor w = from_host(*dev, g.outputs()[o].type, g.outputs()[o].shape, want[o].data(), want[o].size());
      expect_same_bits(*dev, w, outs[o]);
    }
  }
}
