// Stream-ordered reuse of dropped buffers. A tensor dropped while recorded work still uses its
// buffer keeps that memory until the work's batch has finished; a program that records several
// large ops per synchronisation would otherwise allocate fresh memory for each (XLA reuses such
// memory in stream order). Every command of this stream runs after the ones recorded before it
// (a full barrier opens each batch; inside the open batch the new owner's first use records one),
// so the memory can go to a later allocation at once. Used where the buffer cache could not keep
// all such buffers of the size anyway (so that each round of the program would allocate anew).
#include <algorithm>
#include <unordered_map>

#include "exec/stream.hpp"

namespace nxv {

std::optional<Stream::Reclaimed> Stream::reclaim_dropped(uint64_t class_bytes) {
  Lock lock(mutex_);
  struct Held {
    const std::shared_ptr<Buffer>* buffer;
    long refs = 0;
    uint64_t batch = 0;
  };
  std::unordered_map<const Buffer*, Held> held;
  auto scan = [&](const Batch& batch) {
    for (const auto* list : {&batch.used, &batch.written})
      for (const auto& b : *list) {
        if (b->kind() != BufferKind::Device || b->class_bytes() != class_bytes || b->chunks().empty()) continue;
        Held& h = held[b.get()];
        h.buffer = &b;
        ++h.refs;
        h.batch = std::max(h.batch, batch.value);
      }
  };
  for (const Batch& b : in_flight_) scan(b);
  // Read only by the submitting thread meanwhile: its lists can be scanned under the mutex.
  if (submitting_batch_) scan(*submitting_batch_);
  for (const Batch& b : queued_) scan(b);
  if (open_) scan(*open_);
  // Only this stream's lists hold a candidate: no tensor can reach it again (nothing keeps weak
  // references to buffers), so its memory is free once the work recorded so far has run.
  std::vector<const Held*> dropped;
  for (auto& [_, h] : held)
    if (h.buffer->use_count() == h.refs) dropped.push_back(&h);
  // While the buffer cache can keep all of them, the driver's memory is the better choice: the
  // cache serves the same requests later, and new memory needs no barrier against the old work.
  if (dropped.empty() || (dropped.size() + 1) * class_bytes <= core_->buffer_cache().limit()) return std::nullopt;
  // The one whose work was recorded first: least likely to share the open batch.
  const Held& h = **std::min_element(dropped.begin(), dropped.end(),
                                     [](const Held* x, const Held* y) { return x->batch < y->batch; });
  Reclaimed r;
  r.chunks = (*h.buffer)->release_chunks();
  r.after_batch = h.batch;
  r.after_epoch = open_ && open_->value == h.batch ? epoch_ : 0;
  return r;
}

}  // namespace nxv
