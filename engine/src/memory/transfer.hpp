// Copy commands between buffers that may span several chunks.
#pragma once
#include <cstdint>

#include "exec/stream.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

void record_buffer_copy(Recorder& rec, const Buffer& src, uint64_t src_offset, const Buffer& dst,
                        uint64_t dst_offset, uint64_t bytes);
// Throws Deallocated / InvalidArgument when `t` cannot be used on `device`.
void check_same_device(Device& device, const Tensor& t);

}  // namespace nxv
