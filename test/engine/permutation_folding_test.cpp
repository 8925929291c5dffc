// Permutations folded into their producers (graph/permutation_folding.hpp): a transpose of a
// product that swaps its operands' free axes (Nx's gradient of a dot gives one per weight) is
// the product with its operands swapped, with the bits of the dot and the transpose run one
// by one: through the host BLAS (f32, f64 on CPU drivers), lavapipe's kernels, and the GPUs'
// tile (gpu_paths) for integers and floats; batched too; products of a few rows or columns (one
// matrix-vector product each). Not folded: a transpose
// that keeps the free axes' order, a product that another node reads, one whose sums split
// (split-K on GPUs: k >= 512).
#include <cstring>

#include "device/device_impl.hpp"
#include "graph/graph.hpp"
#include "ops/dot/dot_attrs.hpp"
#include "ops/shape/shape_attrs.hpp"
#include "op_case_util.hpp"

using namespace nxv;
using namespace nxv::test;

namespace {

struct Case {
  DType type;
  int64_t batch, k, m, n;  // batch 0: unbatched
};

// dot(a, b) contracting a's and b's axis 0 (after the batch axis): [batch,] m, n; then the
// transpose to [batch,] n, m, as Nx's grad of x . w gives the weight's gradient.
struct Built {
  Graph graph;
  Shape a_shape, b_shape, out_shape;
  DotAttrs attrs;
  std::vector<int64_t> perm;
};

Built transposed_product(const Case& c, bool second_reader = false) {
  Built b;
  bool batched = c.batch > 0;
  b.a_shape = batched ? Shape{c.batch, c.k, c.m} : Shape{c.k, c.m};
  b.b_shape = batched ? Shape{c.batch, c.k, c.n} : Shape{c.k, c.n};
  Shape prod = batched ? Shape{c.batch, c.m, c.n} : Shape{c.m, c.n};
  b.out_shape = batched ? Shape{c.batch, c.n, c.m} : Shape{c.n, c.m};
  b.attrs.left_contract = {batched ? 1 : 0};
  b.attrs.right_contract = {batched ? 1 : 0};
  if (batched) b.attrs.left_batch = {0}, b.attrs.right_batch = {0};
  b.perm = batched ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{1, 0};
  uint32_t x = b.graph.input(c.type, b.a_shape);
  uint32_t y = b.graph.input(c.type, b.b_shape);
  uint32_t d = b.graph.add(OpId::dot, {c.type, prod}, {x, y}, Attrs::of(b.attrs));
  ShapeAttrs t;
  t.axes = b.perm;
  uint32_t tr = b.graph.add(OpId::transpose, {c.type, b.out_shape}, {d}, Attrs::of(t));
  b.graph.output(tr);
  if (second_reader) b.graph.output(d);
  return b;
}

// Compiles and runs the graph; expects `folded` nodes folded and the eager ops' bits.
void expect_eager_bits(Device& dev, const Case& c, size_t folded) {
  Built b = transposed_product(c);
  auto program = compile_program(dev, b.graph);
  EXPECT_EQ(program->stats().fused, folded);
  std::mt19937 rng(101);
  Tensor x = random_tensor(dev, c.type, b.a_shape, rng);
  Tensor y = random_tensor(dev, c.type, b.b_shape, rng);
  auto outs = program->run(dev, {x, y});
  Shape prod = b.out_shape;
  std::swap(prod[prod.size() - 1], prod[prod.size() - 2]);
  Tensor d = run_op(dev, OpId::dot, {c.type, prod}, {x, y}, Attrs::of(b.attrs));
  ShapeAttrs t;
  t.axes = b.perm;
  Tensor eager = run_op(dev, OpId::transpose, {c.type, b.out_shape}, {d}, Attrs::of(t));
  expect_same_bits(dev, eager, outs[0]);
}

}  // namespace

TEST(PermutationFolding, TransposedProductsAreTheSwappedProductWithTheEagerBits) {
  auto dev = shared_device();
  // k of a batch (16, 256), m and n straddling tiles; the host BLAS takes the large f32 ones.
  for (Case c : {Case{DType::F32, 0, 16, 784, 100}, Case{DType::F32, 0, 256, 70, 130}, Case{DType::F32, 0, 9, 5, 7},
                 Case{DType::F64, 0, 33, 65, 40}, Case{DType::S32, 0, 17, 31, 9}, Case{DType::F32, 3, 20, 17, 33},
                 Case{DType::C64, 0, 11, 6, 5}}) {
    SCOPED_TRACE(std::string(dtype_name(c.type)) + " k=" + std::to_string(c.k));
    // GPUs keep complex products unfolded (dot's sums_in_order: their tiers may split k).
    bool gpu = !cpu_paths(dev->impl().core->profile());
    expect_eager_bits(*dev, c, c.type == DType::C64 && gpu ? 0 : 1);
  }
}

TEST(PermutationFolding, OnTheGpuTileTooButNotWhereSumsSplit) {
  auto dev = shared_device();
  GpuDotPaths gpu;  // kernels, not host steps
  // m = 10 (the last layer's weight gradient): rows one by one, the swapped product's columns.
  for (Case c : {Case{DType::F32, 0, 256, 70, 130}, Case{DType::S64, 2, 40, 9, 66}, Case{DType::F64, 0, 64, 33, 31},
                 Case{DType::F32, 0, 256, 10, 200}, Case{DType::F32, 0, 128, 96, 3}}) {
    SCOPED_TRACE(std::string(dtype_name(c.type)) + " k=" + std::to_string(c.k));
    expect_eager_bits(*dev, c, 1);
  }
  // k >= 512 may split on GPUs: kept as the dot and the transpose (and still the eager bits).
  expect_eager_bits(*dev, Case{DType::F32, 0, 600, 8, 12}, 0);
}

TEST(PermutationFolding, OnlyTheFreeAxesSwapAndOnlyASoleReader) {
  auto dev = shared_device();
  // The product is also a graph output: the transpose stays.
  Built shared = transposed_product(Case{DType::F32, 0, 8, 5, 6}, true);
  EXPECT_EQ(compile_program(*dev, shared.graph)->stats().fused, 0u);
  // A transpose of a batched product that moves the batch axis.
  Graph g;
  uint32_t x = g.input(DType::F32, {2, 4, 3});
  uint32_t y = g.input(DType::F32, {2, 4, 5});
  DotAttrs a;
  a.left_contract = {1}, a.right_contract = {1}, a.left_batch = {0}, a.right_batch = {0};
  uint32_t d = g.add(OpId::dot, {DType::F32, {2, 3, 5}}, {x, y}, Attrs::of(a));
  ShapeAttrs t;
  t.axes = {2, 1, 0};
  g.output(g.add(OpId::transpose, {DType::F32, {5, 3, 2}}, {d}, Attrs::of(t)));
  EXPECT_EQ(compile_program(*dev, g)->stats().fused, 0u);
}
