// Graphs the loop kernel's and the regions' tests share (loop_kernel_test.cpp, region_test.cpp):
// an HMC leapfrog step and gradient-fitting steps, and a graph's ops run one by one.
#pragma once
#include <random>
#include <vector>

#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/reduce/reduce_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

namespace nxv::test {

inline Attrs constant_attrs(double x) {
  ShapeAttrs a;
  a.value = AttrNumber{AttrNumber::Kind::Float, 0, 0, x, 0};
  return Attrs::of(a);
}

inline Attrs integer_attrs(int64_t i) {
  ShapeAttrs a;
  a.value = AttrNumber{AttrNumber::Kind::Int, i, 0, 0, 0};
  return Attrs::of(a);
}

// Runs `g`'s nodes one by one on `values` (its inputs), returning its outputs.
inline std::vector<Tensor> run_eagerly(Device& d, const Graph& g, std::vector<Tensor> values) {
  for (const GraphNode& n : g.nodes()) {
    std::vector<Tensor> inputs;
    for (uint32_t v : n.inputs) inputs.push_back(values[v]);
    values.push_back(run_op(d, n.op, n.out, inputs, n.attrs));
  }
  std::vector<Tensor> outs;
  for (uint32_t v : g.outputs()) outs.push_back(values[v]);
  return outs;
}

// One leapfrog step of HMC on a logistic regression's log-density (a N(0, 1) prior):
// grad(q) = x^T (y - sigmoid(x q)) - q; p += h/2 grad(q); q += h p; p += h/2 grad(q).
// State: q, p, x, y, h (the last three unchanged). The gradient's residual goes through an f32
// and a u8 branch as grad's code does (a select on a comparison).
inline Graph leapfrog(int64_t n, int64_t d) {
  const DType f = DType::F64;
  Graph g;
  uint32_t q = g.input(f, {d}), p = g.input(f, {d}), x = g.input(f, {n, d}), y = g.input(f, {n}), h = g.input(f, {});
  auto grad = [&](uint32_t at) {
    uint32_t z = g.add(OpId::dot, {f, {n}}, {x, at}, Attrs::of(contracting(1, 0)));
    uint32_t s = g.add(OpId::sigmoid, {f, {n}}, {z});
    uint32_t positive = g.add(OpId::greater, {DType::U8, {n}}, {z, g.add(OpId::constant, {f, {}}, {}, constant_attrs(0))});
    uint32_t one = g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(1));
    uint32_t half = g.add(OpId::constant, {DType::F32, {}}, {}, constant_attrs(0.5));
    uint32_t w = g.add(OpId::select, {DType::F32, {n}}, {positive, one, half});
    uint32_t r = g.add(OpId::multiply, {f, {n}}, {g.add(OpId::subtract, {f, {n}}, {y, s}), w});
    uint32_t xr = g.add(OpId::dot, {f, {d}}, {r, x}, Attrs::of(contracting(0, 0)));
    return g.add(OpId::subtract, {f, {d}}, {xr, at});
  };
  uint32_t half_h = g.add(OpId::multiply, {f, {}}, {h, g.add(OpId::constant, {f, {}}, {}, constant_attrs(0.5))});
  uint32_t p1 = g.add(OpId::add, {f, {d}}, {p, g.add(OpId::multiply, {f, {d}}, {half_h, grad(q)})});
  uint32_t q1 = g.add(OpId::add, {f, {d}}, {q, g.add(OpId::multiply, {f, {d}}, {h, p1})});
  uint32_t p2 = g.add(OpId::add, {f, {d}}, {p1, g.add(OpId::multiply, {f, {d}}, {half_h, grad(q1)})});
  for (uint32_t v : {q1, p2, x, y, h}) g.output(v);
  return g;
}

inline std::vector<Tensor> leapfrog_inputs(Device& dev, int64_t n, int64_t d) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0, 1);
  auto values = [&](int64_t count, double scale) {
    std::vector<double> v(static_cast<size_t>(count));
    for (auto& e : v) e = normal(rng) * scale;
    return v;
  };
  std::vector<double> y(static_cast<size_t>(n));
  for (auto& e : y) e = normal(rng) > 0 ? 1 : 0;
  return {upload(dev, DType::F64, {d}, values(d, 0.1)), upload(dev, DType::F64, {d}, values(d, 1)),
          upload(dev, DType::F64, {n, d}, values(n * d, 1)), upload(dev, DType::F64, {n}, y),
          upload(dev, DType::F64, {}, std::vector<double>{0.01})};
}

// Gradient steps with reductions: sums over every axis and one axis (rows and columns), a
// max, all and any on comparisons; `c` chains of the parameters (axis 0) where c > 0.
inline Graph fit_steps(DType f, int64_t c, int64_t n, int64_t d) {
  Graph g;
  auto shape = [&](Shape s) {
    if (c > 0) s.insert(s.begin(), c);
    return s;
  };
  uint32_t w = g.input(f, shape({d})), x = g.input(f, {n, d}), y = g.input(f, {n});
  ReduceAttrs all, rows, columns;
  rows.all_axes = columns.all_axes = false;
  rows.axes = {c > 0 ? 2 : 1};
  columns.axes = {c > 0 ? 1 : 0};
  // x * w broadcast: [n, d] (per chain), its row sums the logits.
  uint32_t wb = c > 0 ? g.add(OpId::reshape, {f, {c, 1, d}}, {w}, Attrs::of(ShapeAttrs{})) : w;
  uint32_t xw = g.add(OpId::multiply, {f, shape({n, d})}, {x, wb});
  uint32_t z = g.add(OpId::sum, {f, shape({n})}, {xw}, Attrs::of(rows));
  uint32_t r = g.add(OpId::subtract, {f, shape({n})}, {g.add(OpId::sigmoid, {f, shape({n})}, {z}), y});
  uint32_t rb = g.add(OpId::reshape, {f, shape({n, 1})}, {r}, Attrs::of(ShapeAttrs{}));
  uint32_t grad = g.add(OpId::sum, {f, shape({d})}, {g.add(OpId::multiply, {f, shape({n, d})}, {rb, x})}, Attrs::of(columns));
  ReduceAttrs last = rows;
  last.axes = {c > 0 ? 1 : 0};
  uint32_t total = c > 0 ? g.add(OpId::sum, {f, shape({})}, {r}, Attrs::of(last)) : g.add(OpId::sum, {f, {}}, {r}, Attrs::of(all));
  uint32_t worst = c > 0 ? g.add(OpId::reduce_max, {f, shape({})}, {g.add(OpId::abs, {f, shape({n})}, {r})}, Attrs::of(last))
                         : g.add(OpId::reduce_max, {f, {}}, {g.add(OpId::abs, {f, {n}}, {r})}, Attrs::of(all));
  uint32_t zero = g.add(OpId::constant, {f, {}}, {}, constant_attrs(0));
  uint32_t positive = g.add(OpId::greater, {DType::U8, shape({n})}, {r, zero});
  uint32_t any = c > 0 ? g.add(OpId::any, {DType::U8, shape({})}, {positive}, Attrs::of(last))
                       : g.add(OpId::any, {DType::U8, {}}, {positive}, Attrs::of(all));
  uint32_t every = c > 0 ? g.add(OpId::all, {DType::U8, shape({})}, {positive}, Attrs::of(last))
                         : g.add(OpId::all, {DType::U8, {}}, {positive}, Attrs::of(all));
  uint32_t flags = g.add(OpId::as_type, {f, shape({})}, {g.add(OpId::add, {DType::U8, shape({})}, {any, every})});
  uint32_t scale = g.add(OpId::add, {f, shape({})}, {g.add(OpId::add, {f, shape({})}, {total, worst}), flags});
  uint32_t sb = c > 0 ? g.add(OpId::reshape, {f, {c, 1}}, {scale}, Attrs::of(ShapeAttrs{})) : scale;
  uint32_t step = g.add(OpId::multiply, {f, shape({d})}, {g.add(OpId::add, {f, shape({d})}, {grad, sb}),
                                                         g.add(OpId::constant, {f, {}}, {}, constant_attrs(0.01))});
  g.output(g.add(OpId::subtract, {f, shape({d})}, {w, step}));
  g.output(x);
  g.output(y);
  return g;
}

}  // namespace nxv::test
