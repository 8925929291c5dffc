#include "exec/launch.hpp"

#include "nxv/error.hpp"

namespace nxv {
namespace {

void patch(std::byte* bytes, const std::vector<AddressPatch>& patches, std::span<const std::shared_ptr<Buffer>> buffers,
           std::span<const uint64_t> slot_offsets) {
  for (const auto& p : patches) {
    const uint64_t start = slot_offsets.empty() ? 0 : slot_offsets[p.ref.slot];
    uint64_t address = buffers[p.ref.slot]->address_at(start + p.ref.byte_offset);
    std::memcpy(bytes + p.offset, &address, sizeof address);
  }
}

}  // namespace

uint32_t LaunchBuilder::bind(const std::shared_ptr<Buffer>& buffer) {
  for (uint32_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i] == buffer) return i;
  buffers_.push_back(buffer);
  exec_.slot_count_ = uint32_t(buffers_.size());
  return uint32_t(buffers_.size() - 1);
}

Executable LaunchBuilder::finish() && { return std::move(exec_); }

bool Executable::immediate_ready(Stream& stream, std::span<const std::shared_ptr<Buffer>> buffers) const {
  for (const Launch& l : launches_) {
    if (!l.host || !l.immediate) return false;
    for (auto [slot, access] : l.uses)
      if (!stream.writes_finished(*buffers[slot])) return false;
  }
  return true;
}

bool Executable::run_at_once(Stream& stream, std::span<const std::shared_ptr<Buffer>> buffers) const {
  if (!has_host_steps_ || !immediate_ready(stream, buffers)) return false;
  for (const Launch& l : launches_) l.host(buffers);
  return true;
}

void Executable::reorder(const std::vector<size_t>& order) {
  std::vector<Launch> launches;
  launches.reserve(order.size());
  for (size_t i : order) launches.push_back(std::move(launches_.at(i)));
  launches_ = std::move(launches);
}

void Executable::run(Stream& stream, vk::PipelineLayout layout, std::span<const std::shared_ptr<Buffer>> buffers,
                     const Gate* gate, std::span<const uint64_t> slot_offsets) const {
  if (buffers.size() != slot_count_ || (!slot_offsets.empty() && slot_offsets.size() != slot_count_))
    throw Error(ErrorKind::InvalidArgument, "an executable of " + std::to_string(slot_count_) + " buffers was given " +
                                                std::to_string(buffers.size()));
  if (!has_host_steps_) return record(stream, layout, buffers, 0, launches_.size(), gate, slot_offsets);
  if (gate) throw Error(ErrorKind::InvalidArgument, "a run with host steps cannot be gated on the device");
  if (!slot_offsets.empty()) throw Error(ErrorKind::InvalidArgument, "a run with host steps binds buffers from their start");
  if (run_at_once(stream, buffers)) return;
  // A host step waits for the GPU: a caller that may not block retries where it may.
  if (CompileFreeScope::active()) throw KernelNotReady();
  size_t begin = 0;
  while (begin < launches_.size()) {
    size_t end = begin;
    while (end < launches_.size() && !launches_[end].host) ++end;
    record(stream, layout, buffers, begin, end);
    if (end == launches_.size()) break;
    // Its inputs were written by work recorded until now (here or by earlier ops); its output
    // may be memory that such work still reads (stream-ordered reuse).
    stream.synchronize();
    for (auto [slot, access] : launches_[end].uses)
      if (access == Access::Read) stream.wait_for_writes(*buffers[slot]);  // raises for contents never computed
    launches_[end].host(buffers);
    begin = end + 1;
  }
}

namespace {

// A dispatch for a trace: kernel, grid, and the push constants as 32-bit words.
std::string describe_dispatch(const Launch& l, const std::byte* push) {
  std::string out = l.kernel->label + " grid " + std::to_string(l.grid[0]) + "x" + std::to_string(l.grid[1]) + "x" +
                    std::to_string(l.grid[2]) + " push";
  for (uint32_t i = 0; i + 4 <= l.push_size && i < 64; i += 4) {
    uint32_t word;
    std::memcpy(&word, push + i, 4);
    (out += ' ') += std::to_string(word);
  }
  return out;
}

// The gate's flag made visible to the conditional-rendering stage, then the region opened; the
// region closes when this leaves scope, also when recording throws.
class GatedRegion {
 public:
  GatedRegion(Recorder& rec, const Gate* gate) : cmd_(gate ? &rec.cmd() : nullptr) {
    if (!gate) return;
    const Buffer& b = *gate->buffer;
    if (gate->byte_offset % 4 != 0 || gate->byte_offset + 4 > b.size())
      throw Error(ErrorKind::InvalidArgument, "a gate is a 32-bit word inside its buffer, at a multiple of 4 bytes");
    rec.use(gate->buffer, Access::Read);
    vk::MemoryBarrier2 flag{.srcStageMask = vk::PipelineStageFlagBits2::eComputeShader | vk::PipelineStageFlagBits2::eTransfer,
                            .srcAccessMask = vk::AccessFlagBits2::eShaderWrite | vk::AccessFlagBits2::eTransferWrite,
                            .dstStageMask = vk::PipelineStageFlagBits2::eConditionalRenderingEXT,
                            .dstAccessMask = vk::AccessFlagBits2::eConditionalRenderingReadEXT};
    cmd_->pipelineBarrier2({.memoryBarrierCount = 1, .pMemoryBarriers = &flag});
    const BufferChunk& chunk = b.chunks().at(gate->byte_offset / b.chunk_bytes());
    cmd_->beginConditionalRenderingEXT({.buffer = chunk.buffer, .offset = gate->byte_offset % b.chunk_bytes()});
  }
  ~GatedRegion() {
    if (cmd_) cmd_->endConditionalRenderingEXT();
  }
  GatedRegion(const GatedRegion&) = delete;
  GatedRegion& operator=(const GatedRegion&) = delete;

 private:
  const vk::raii::CommandBuffer* cmd_;
};

}  // namespace

void Executable::record(Stream& stream, vk::PipelineLayout layout, std::span<const std::shared_ptr<Buffer>> buffers,
                        size_t begin, size_t end, const Gate* gate, std::span<const uint64_t> slot_offsets) const {
  if (begin == end) return;
  // Two pointers captured: std::function keeps the lambda inline (no allocation per op).
  struct Bound {
    vk::PipelineLayout layout;
    std::span<const std::shared_ptr<Buffer>> buffers;
    size_t begin, end;
    const Gate* gate;
    std::span<const uint64_t> slot_offsets;
  } bound_args{layout, buffers, begin, end, gate, slot_offsets};
  stream.record([this, &bound_args](Recorder& rec) {
    auto [layout, buffers, begin, end, gate, slot_offsets] = bound_args;
    GatedRegion region(rec, gate);
    const Kernel* bound = nullptr;
    std::array<std::byte, kPushConstantBytes> push;
    std::vector<std::byte> params;
    for (size_t i = begin; i < end; ++i) {
      const Launch& l = launches_[i];
      for (auto [slot, access] : l.uses) rec.use(buffers[slot], access);
      const auto& cmd = rec.cmd();
      if (bound != l.kernel) {
        cmd.bindPipeline(vk::PipelineBindPoint::eCompute, *l.kernel->pipeline);
        bound = l.kernel;
      }
      std::memcpy(push.data(), l.push.data(), l.push_size);
      patch(push.data(), l.push_addresses, buffers, slot_offsets);
      if (!l.params.empty()) {
        params = l.params;
        patch(params.data(), l.params_addresses, buffers, slot_offsets);
        uint64_t address = rec.params(params.data(), params.size());
        std::memcpy(push.data() + l.params_address_offset, &address, sizeof address);
      }
      rec.cmd().getDispatcher()->vkCmdPushConstants(static_cast<VkCommandBuffer>(*cmd), static_cast<VkPipelineLayout>(layout),
                                                    VK_SHADER_STAGE_COMPUTE_BIT, 0, l.push_size, push.data());
      cmd.dispatch(l.grid[0], l.grid[1], l.grid[2]);
      rec.count_command();
      if (rec.tracing()) rec.trace(describe_dispatch(l, push.data()));
      if (rec.profiling()) rec.timed(l.kernel->label);
    }
  });
}

}  // namespace nxv
