// Host <-> device copies: direct through the mapping where the memory allows it, otherwise
// through a staging buffer recorded on the stream (uploads never wait).
#include <algorithm>
#include <cstring>

#include "device/device_impl.hpp"
#include "memory/transfer.hpp"
#include "nxv/error.hpp"
#include "nxv/tensor.hpp"

namespace nxv {

void record_buffer_copy(Recorder& rec, const Buffer& src, uint64_t src_offset, const Buffer& dst,
                        uint64_t dst_offset, uint64_t bytes) {
  while (bytes > 0) {
    uint64_t n = std::min({bytes, src.bytes_left_in_chunk(src_offset), dst.bytes_left_in_chunk(dst_offset)});
    const auto& s = src.chunks()[src_offset / src.chunk_bytes()];
    const auto& d = dst.chunks()[dst_offset / dst.chunk_bytes()];
    vk::BufferCopy region{.srcOffset = src_offset % src.chunk_bytes(),
                          .dstOffset = dst_offset % dst.chunk_bytes(),
                          .size = n};
    rec.cmd().copyBuffer(vk::Buffer(s.buffer), vk::Buffer(d.buffer), region);
    rec.count_command();
    src_offset += n;
    dst_offset += n;
    bytes -= n;
  }
}

void check_same_device(Device& device, const Tensor& t) {
  if (!t.buffer) throw Error(ErrorKind::Deallocated, "tensor was deallocated");
  if (t.buffer->core_ptr() != device.impl().core) {
    t.buffer->core_ptr()->check_not_lost();  // a tensor of a device since re-opened
    throw Error(ErrorKind::InvalidArgument, "tensor lives on another device");
  }
}

Tensor empty(Device& device, DType type, const Shape& shape) {
  uint64_t n = uint64_t(shape_size(shape));
  Tensor t;
  t.buffer = device.impl().allocate(n * dtype_size(type));
  t.type = type;
  t.shape = shape;
  t.strides = row_major_strides(shape);
  return t;
}

Tensor from_host(Device& device, DType type, const Shape& shape, const void* data, size_t bytes) {
  uint64_t n = uint64_t(shape_size(shape));
  if (bytes != n * dtype_size(type))
    throw Error(ErrorKind::InvalidArgument, "binary of " + std::to_string(bytes) + " bytes does not match " +
                                                std::to_string(n) + " elements of " + std::string(dtype_name(type)));
  auto& impl = device.impl();
  // Not memory reused in stream order: the host may write it at once.
  Tensor t;
  t.buffer = impl.allocate(bytes, BufferKind::Device, false);
  t.type = type;
  t.shape = shape;
  t.strides = row_major_strides(shape);
  if (bytes == 0) return t;
  if (t.buffer->host_writable()) {
    t.buffer->write_host(0, data, bytes);  // a fresh buffer: the GPU has not touched it
    return t;
  }
  auto staging = impl.allocate(bytes, BufferKind::Upload);
  staging->write_host(0, data, bytes);
  impl.stream.record([&](Recorder& rec) {
    rec.use(staging, Access::Read);
    rec.use(t.buffer, Access::Write);
    record_buffer_copy(rec, *staging, 0, *t.buffer, 0, bytes);
  });
  return t;
}

void to_host(Device& device, const Tensor& tensor, void* dst, size_t bytes) {
  try_to_host(device, tensor, dst, bytes, UINT64_MAX);
}

bool try_to_host(Device& device, const Tensor& tensor, void* dst, size_t bytes, uint64_t timeout_ns) {
  check_same_device(device, tensor);
  uint64_t n = uint64_t(tensor.size());
  if (bytes != n * dtype_size(tensor.type))
    throw Error(ErrorKind::InvalidArgument, "destination of " + std::to_string(bytes) + " bytes does not match " +
                                                std::to_string(n) + " elements");
  if (bytes == 0) return true;
  Tensor t = tensor.is_contiguous() ? tensor : contiguous(device, tensor);
  uint64_t offset = uint64_t(t.offset) * dtype_size(t.type);
  auto& impl = device.impl();
  if (t.buffer->host_readable()) {
    if (!impl.stream.wait_for_writes(*t.buffer, timeout_ns)) return false;
    t.buffer->read_host(offset, dst, bytes);
    return true;
  }
  auto staging = impl.allocate(bytes, BufferKind::Download);
  impl.stream.record([&](Recorder& rec) {
    rec.use(t.buffer, Access::Read);
    rec.use(staging, Access::Write);
    record_buffer_copy(rec, *t.buffer, offset, *staging, 0, bytes);
  });
  if (!impl.stream.wait_for_writes(*staging, timeout_ns)) return false;
  staging->read_host(0, dst, bytes);
  return true;
}

std::vector<std::byte> to_host(Device& device, const Tensor& tensor) {
  std::vector<std::byte> out(uint64_t(tensor.size()) * dtype_size(tensor.type));
  to_host(device, tensor, out.data(), out.size());
  return out;
}

}  // namespace nxv
