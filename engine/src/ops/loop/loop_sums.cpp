// The loop kernel's products and reductions: each element summed over the lanes, and combined
// in the order, of its eager kernel (ops/dot/dot_in_workgroup.hpp, ops/reduce/reduce_in_workgroup.hpp).
#include <bit>

#include "ops/loop/loop_code.hpp"
#include "ops/reduce/folds.hpp"

namespace nxv::loop {

void LoopCode::product(const GraphNode& node, uint32_t v) {
  if (node.inputs.size() != 2) refuse("a product with fused inputs");
  const Ref& left = *refs_[node.inputs[0]];
  const Ref& right = *refs_[node.inputs[1]];
  std::string why;
  auto w = workgroup_matvec(device_, node.attrs.as<DotAttrs>(), spec_of(left.view), spec_of(right.view),
                            node.out.type, why);
  if (!w) refuse(why);
  const Ref& mat = w->mat_operand == 0 ? left : right;
  const Ref& vec = w->mat_operand == 0 ? right : left;
  const auto& attrs = node.attrs.as<DotAttrs>();
  bool batched = left.batched || right.batched;
  if (batched ? w->batch != chains_ || attrs.left_batch != std::vector<int64_t>{0} ||
                    attrs.right_batch != std::vector<int64_t>{0}
              : w->batch != 1)
    refuse("dot: a product whose batch (" + std::to_string(w->batch) + ") is not the " + std::to_string(chains_) +
           " chains (the vectorized axis)");
  uint32_t k = array(node.out, batched);
  refs_[v] = Ref{false, k, layout(node.out), batched};
  const std::string acc = glsl_name(w->acc), id = std::to_string(v);
  std::string mac = w->mac;
  defines_.insert({"NXV_LOOP_MAC" + id + "(acc, a, b)", mac});
  const uint32_t lanes = w->k_lanes;
  // A workgroup's chain is its batch item: a shared array of a batched value holds it alone.
  auto at = [&](const Ref& r, int64_t batch_stride, const std::string& i) {
    std::string chain = batched && !(r.batched && !r.global) && batch_stride ? "c * " + u(uint64_t(batch_stride)) + " + " : "";
    return u(uint64_t(r.view.offset)) + " + " + chain + i;
  };
  std::string m = read(mat, at(mat, w->mat_batch, "r * " + u(uint64_t(w->mat_row)) + " + k * " + u(uint64_t(w->mat_k))));
  std::string x = read(vec, at(vec, w->vec_batch, "k * " + u(uint64_t(w->vec_k))));
  std::string load_m = glsl_load(mat.view.type, acc), load_v = glsl_load(vec.view.type, acc);
  load_m.replace(load_m.find('x'), 1, m);
  load_v.replace(load_v.find('x'), 1, x);
  Accesses reads;
  for (const Ref* r : {&mat, &vec})
    if (!r->global) reads[name_of(*r)] = false;
  const std::string out = name_of(*refs_[v]);
  // Lane l's share of row r's sum: k = l, l + lanes, ... in order.
  auto share = [&](const std::string& indent) {
    return indent + acc + " acc = " + acc + "(0);\n" + indent + "for (uint k = l; k < " + u(w->k) + "; k += " +
           u(lanes) + ") acc = NXV_LOOP_MAC" + id + "(acc, " + load_m + ", " + load_v + ");\n";
  };
  const uint32_t width = shuffle_size();
  const bool shuffles = width > 1 && std::has_single_bit(lanes);
  // Threads per row: as many as one pass of the workgroup gives every row, up to the lanes and
  // the subgroup's width (so that the lanes between them combine by shuffles).
  uint32_t threads = 1;
  if (shuffles)
    while (threads < lanes && threads < width && uint64_t(w->rows) * threads * 2 <= kWorkgroup) threads *= 2;
  const uint32_t per_thread = lanes / threads;
  if (std::has_single_bit(lanes) && per_thread <= kLanesPerThread) {
    // Thread j of a row holds its lanes j, j + threads, ... in registers, each summed over its k
    // in order; the lanes combine in matvec.comp's pairs (lane l adds lane l + s, s from
    // lanes / 2 to 1): in registers while s >= threads, then by shuffles. One phase, and a row
    // per invocation where threads is 1 (its element then the invocation's own).
    const std::string total = u(uint64_t(w->rows) * threads), shuffle = threads > 1 ? subgroup_shuffle(w->acc, id) : "";
    std::string code = "    for (uint base = 0u; base < " + total + "; base += " + u(kWorkgroup) +
                       ") {\n      const uint q = base + t, r = q / " + u(threads) + ", j = q % " + u(threads) + ";\n      " +
                       acc + " p0 = " + acc + "(0)";
    for (uint32_t i = 1; i < per_thread; ++i) code += ", p" + std::to_string(i) + " = " + acc + "(0)";
    // Every round's loads issued before the sums (unrolled to a constant count, the tail guarded).
    code += ";\n      if (q < " + total + ") {\n        [[unroll]] for (uint k1 = 0u; k1 < " + u((w->k + lanes - 1) / lanes) +
            "; ++k1) {\n          const uint k0 = j + k1 * " + u(lanes) + ";\n";
    for (uint32_t i = 0; i < per_thread; ++i) {
      const std::string p = "p" + std::to_string(i);
      code += "          { const uint k = k0 + " + u(uint64_t(i) * threads) + "; if (k < " + u(w->k) + ") " + p +
              " = NXV_LOOP_MAC" + id + "(" + p + ", " + load_m + ", " + load_v + "); }\n";
    }
    code += "        }\n";
    for (uint32_t step = per_thread / 2; step > 0; step /= 2)
      for (uint32_t i = 0; i < step; ++i)
        code += "        p" + std::to_string(i) + " = p" + std::to_string(i) + " + p" + std::to_string(i + step) + ";\n";
    code += "      }\n";
    for (uint32_t step = threads / 2; step > 0; step /= 2) code += "      p0 = p0 + " + shuffle + "(p0, " + u(step) + ");\n";
    code += "      if (q < " + total + " && j == 0u) " + store_into(k, node.out.type, "r", "p0") + "    }\n";
    phase(reads, {{out, threads}}, code);  // row r at invocation r * threads (one pass where threads > 1)
  } else {
    // Every share at once into shared memory (rows in chunks that fit it), then each row's
    // shares combined in matvec.comp's order: lane l adds lane l + s, s from lanes / 2 to 1.
    // With shuffles, lanes below the subgroup's width each take their own lanes l + width j
    // (the pairs of the steps s >= width), then shuffles finish.
    const uint32_t chunk = std::max<uint32_t>(1, kPartials / lanes);
    note_partials(w->acc, std::min<uint64_t>(chunk, w->rows) * lanes);
    const std::string part = "nxv_part_" + acc;
    const uint32_t per_thread = shuffles ? lanes / width : lanes, threads = shuffles ? width : 1;
    std::string combine;
    for (uint32_t l = 0; l < per_thread; ++l)
      combine += "        p" + std::to_string(l) + " = " + part + "[j * " + u(lanes) + " + l + " + u(l * threads) + "];\n";
    for (uint32_t step = lanes / 2; step >= threads && step > 0; step /= 2)
      for (uint32_t l = 0; l < step / threads; ++l)
        combine += "        p" + std::to_string(l) + " = p" + std::to_string(l) + " + p" + std::to_string(l + step / threads) + ";\n";
    std::string declare = "      " + acc + " p0 = " + acc + "(0)";
    for (uint32_t l = 1; l < per_thread; ++l) declare += ", p" + std::to_string(l) + " = " + acc + "(0)";
    declare += ";\n";
    for (uint32_t base = 0; base < w->rows; base += chunk) {
      uint32_t rows = std::min(chunk, w->rows - base);
      phase(reads, {{part, false}},
            "    for (uint q = t; q < " + u(uint64_t(rows) * lanes) + "; q += " + u(kWorkgroup) + ") {\n      const uint r = " +
                u(base) + " + q / " + u(lanes) + ", l = q % " + u(lanes) + ";\n" + share("      ") + "      " + part +
                "[q] = acc;\n    }\n");
      const std::string total = u(uint64_t(rows) * threads);
      std::string code = "    for (uint at = 0u; at < " + total + "; at += " + u(kWorkgroup) + ") {\n      const uint q = at + t, j = q / " +
                         u(threads) + ", l = q % " + u(threads) + ";\n" + declare + "      if (q < " + total + ") {\n" +
                         combine + "      }\n";
      if (shuffles) {
        for (uint32_t step = width / 2; step > 0; step /= 2)
          code += "      p0 = p0 + " + subgroup_shuffle(w->acc, id) + "(p0, " + u(step) + ");\n";
      }
      code += "      if (q < " + total + " && l == 0u) " + store_into(k, node.out.type, u(base) + " + j", "p0") + "    }\n";
      phase({{part, false}}, {{out, base == 0 && !shuffles}}, code);
    }
  }
  features_.add_type(mat.view.type);
  features_.add_type(vec.view.type);
  if (w->acc == AccType::F64) uses_f64_ = true;
}

void LoopCode::note_partials(AccType acc, uint64_t elements) {
  uint64_t& size = partials_[acc];
  size = std::max(size, elements);
}

void LoopCode::reduction(const GraphNode& node, uint32_t v) {
  if (node.inputs.size() != 1) refuse(std::string(op_info(node.op).name) + " with fused inputs");
  const Ref in = *refs_[node.inputs[0]];
  std::string why;
  auto w = workgroup_reduce(device_, node.op, node.out, spec_of(in.view), node.attrs, why);
  if (!w) refuse(why);
  const bool batched = in.batched;
  if (batched && reduced_axes(node.op, node.attrs, in.view.shape.size())[0])
    refuse(std::string(op_info(node.op).name) + " over the chain axis (the vectorized axis)");
  uint32_t k = array(node.out, batched);
  refs_[v] = Ref{false, k, layout(node.out), batched};
  const std::string id = std::to_string(v), acc = glsl_name(w->acc);
  defines_.insert({"NXV_LOOP_COMBINE" + id + "(a, b)", "(" + w->combine + ")"});
  defines_.insert({"NXV_LOOP_LOAD" + id + "(x)", w->load});
  std::string source;  // the pass before's partials (a shared array of the workgroup's rows)
  for (size_t p = 0; p < w->passes.size(); ++p) {
    const WorkgroupReducePass& pass = w->passes[p];
    const ReduceGeometry& g = pass.geometry;
    const bool first = p == 0, last = p + 1 == w->passes.size();
    uint64_t outer = g.outer;  // the workgroup's chain's
    if (batched) {
      if (g.outer % uint64_t(chains_) != 0) refuse(std::string(op_info(node.op).name) + " over the chain axis");
      outer /= uint64_t(chains_);
    }
    const uint64_t rows = outer * pass.chunks * g.inner;
    std::string dest = last ? name_of(*refs_[v]) : "nxv_r" + std::to_string(raw_arrays_.size());
    if (!last) raw_arrays_.emplace_back(w->acc, rows);
    Accesses reads;
    if (first && !in.global) reads[name_of(in)] = false;
    if (!first) reads[source] = false;
    // Lane l's fold of row `row` (of the workgroup's rows of this pass) into acc.
    auto fold = [&](const std::string& row) {
      const bool own = !first || (!in.global && in.batched);
      std::string s = "      const uint og = " + row + " / " + u(g.inner) + ", chunk = og % " + u(pass.chunks) +
                      ", o = og / " + u(pass.chunks) + ";\n";
      std::string o = batched && !own ? "(c * " + u(outer) + " + o)" : "o";
      std::string base = (first ? u(uint64_t(in.view.offset)) + " + " : std::string()) + o + " * " + u(g.outer_stride) +
                         " + (" + row + " % " + u(g.inner) + ") * " + u(g.inner_stride);
      auto element = [&](const std::string& r) {
        std::string at = base + " + (" + r + ") * " + u(g.reduced_stride);
        return first ? "NXV_LOOP_LOAD" + id + "(" + read(in, at) + ")" : source + "[" + at + "]";
      };
      s += "      const uint r0 = chunk * " + u(pass.chunk_len) + ", r1 = min(" + u(g.reduced) + ", r0 + " +
           u(pass.chunk_len) + ");\n      " + acc + " acc = " + w->ident + ";\n";
      if (pass.vec4) {
        s += "      for (uint j = r0 / 4u + l; j < r1 / 4u; j += " + u(pass.lanes) + ") {\n";
        for (int e = 0; e < 4; ++e)
          s += "        acc = NXV_LOOP_COMBINE" + id + "(acc, " + element("4u * j + " + u(uint64_t(e))) + ");\n";
        s += "      }\n";
      } else {
        s += "      for (uint r = r0 + l; r < r1; r += " + u(pass.lanes) + ") acc = NXV_LOOP_COMBINE" + id + "(acc, " +
             element("r") + ");\n";
      }
      return s;
    };
    auto store = [&](const std::string& index, const std::string& value) {
      return last ? store_into(k, node.out.type, index, value) : dest + "[" + index + "] = " + value + ";\n";
    };
    if (pass.lanes == 1) {
      phase(reads, {{dest, true}},
            "    for (uint row = t; row < " + u(rows) + "; row += " + u(kWorkgroup) + ") {\n      const uint l = 0u;\n" +
                fold("row") + "      " + store("row", "acc") + "    }\n");
    } else {
      // Every lane's fold at once into shared memory (rows in chunks that fit it), then the
      // lanes combined level by level as reduce.comp combines them.
      const std::string part = "nxv_part_" + acc;
      const uint32_t lanes = pass.lanes, chunk = std::max<uint32_t>(1, kPartials / lanes);
      const uint32_t sw = pass.shuffle_width;
      const bool shuffles = sw > 1 && shuffle_size() >= sw && std::has_single_bit(lanes);
      if (!shuffles || lanes > sw) note_partials(w->acc, std::min<uint64_t>(chunk, rows) * lanes);
      auto level = [&](uint64_t chunk_rows, uint32_t step, uint32_t reach, uint64_t per_row) {
        // Lanes l = 0, step, 2 step, ... (per_row of them) take lane l + reach.
        phase({{part, false}}, {{part, false}},
              "    for (uint q = t; q < " + u(chunk_rows * per_row) + "; q += " + u(kWorkgroup) +
                  ") {\n      const uint at = (q / " + u(per_row) + ") * " + u(lanes) + " + (q % " + u(per_row) + ") * " +
                  u(step) + ";\n      " + part + "[at] = NXV_LOOP_COMBINE" + id + "(" + part + "[at], " + part + "[at + " +
                  u(reach) + "]);\n    }\n");
      };
      for (uint64_t base = 0; base < rows; base += chunk) {
        uint64_t chunk_rows = std::min<uint64_t>(chunk, rows - base);
        if (shuffles) {
          // The shuffles' levels in registers (each lane combines with lane l ^ d, as
          // reduce.comp does), then one invocation a row combines the lanes at multiples of the
          // shuffles' width in the shared-memory tree's pairs.
          const std::string total = u(chunk_rows * lanes), shuffle = subgroup_shuffle(w->acc, id);
          std::string code = "    for (uint at = 0u; at < " + total + "; at += " + u(kWorkgroup) +
                             ") {\n      const uint q = at + t, row = " + u(base) + " + q / " + u(lanes) + ", l = q % " +
                             u(lanes) + ";\n      " + acc + " lane_acc = " + w->ident + ";\n      if (q < " + total +
                             ") {\n" + fold("row") + "      lane_acc = acc;\n      }\n";
          for (uint32_t d = 1; d < sw; d *= 2)
            code += "      { const " + acc + " other = " + shuffle + "(lane_acc, " + u(d) + "); lane_acc = NXV_LOOP_COMBINE" +
                    id + "(lane_acc, other); }\n";
          if (lanes == sw) {
            code += "      if (q < " + total + " && l == 0u) " + store("row", "lane_acc") + "    }\n";
            // One pass: row r at invocation r * lanes.
            phase(reads, {{dest, base == 0 && chunk_rows * lanes <= kWorkgroup ? lanes : 0u}}, code);
            continue;
          }
          code += "      if (q < " + total + " && l % " + u(sw) + " == 0u) " + part + "[q] = lane_acc;\n    }\n";
          phase(reads, {{part, false}}, code);
          const uint32_t groups = lanes / sw;
          std::string tree = "      " + acc + " p0 = " + part + "[j * " + u(lanes) + "]";
          for (uint32_t g = 1; g < groups; ++g)
            tree += ", p" + std::to_string(g) + " = " + part + "[j * " + u(lanes) + " + " + u(g * sw) + "]";
          tree += ";\n";
          for (uint32_t s = lanes / 2; s >= sw; s /= 2)
            for (uint32_t g = 0; g < s / sw; ++g)
              tree += "      p" + std::to_string(g) + " = NXV_LOOP_COMBINE" + id + "(p" + std::to_string(g) + ", p" +
                      std::to_string(g + s / sw) + ");\n";
          phase({{part, false}}, {{dest, base == 0}},
                "    for (uint j = t; j < " + u(chunk_rows) + "; j += " + u(kWorkgroup) + ") {\n" + tree + "      " +
                    store(u(base) + " + j", "p0") + "    }\n");
          continue;
        }
        phase(reads, {{part, false}},
              "    for (uint q = t; q < " + u(chunk_rows * lanes) + "; q += " + u(kWorkgroup) +
                  ") {\n      const uint row = " + u(base) + " + q / " + u(lanes) + ", l = q % " + u(lanes) + ";\n" +
                  fold("row") + "      " + part + "[q] = acc;\n    }\n");
        // Shuffles: each lane takes lane l ^ d, the lanes at multiples of 2d the ones that count.
        for (uint32_t d = 1; d < pass.shuffle_width; d *= 2) level(chunk_rows, 2 * d, d, lanes / (2 * d));
        // Shared memory: lanes below s at multiples of the shuffles' width take lane l + s.
        for (uint32_t s = lanes / 2; s >= pass.shuffle_width && s > 0; s /= 2)
          level(chunk_rows, pass.shuffle_width, s, s / pass.shuffle_width);
        phase({{part, false}}, {{dest, base == 0}},
              "    for (uint j = t; j < " + u(chunk_rows) + "; j += " + u(kWorkgroup) + ") " +
                  store(u(base) + " + j", part + "[j * " + u(lanes) + "]"));
      }
    }
    source = dest;
  }
}

}  // namespace nxv::loop
