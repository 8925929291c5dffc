// Tensors: a shared device buffer seen through a shape, element strides and an offset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nxv/device.hpp"
#include "nxv/dtype.hpp"

namespace nxv {

class Buffer;  // device memory with shared ownership (engine/src/memory)

using Shape = std::vector<int64_t>;

struct Tensor {
  std::shared_ptr<Buffer> buffer;
  DType type = DType::F32;
  Shape shape;
  std::vector<int64_t> strides;  // in elements; 0 for a broadcast axis
  int64_t offset = 0;            // in elements

  int64_t size() const;           // number of elements
  bool is_contiguous() const;     // row-major dense, whatever the offset
};

int64_t shape_size(const Shape& shape);
// "{2, 3}": a shape as error messages spell it.
std::string shape_text(const Shape& shape);
std::vector<int64_t> row_major_strides(const Shape& shape);

// New uninitialised row-major tensor.
Tensor empty(Device& device, DType type, const Shape& shape);
// Copies `bytes` (row-major, native endianness, exactly size*dtype_size) to the device.
Tensor from_host(Device& device, DType type, const Shape& shape, const void* data, size_t bytes);
// Waits only for the work that produced the tensor, then copies it out row-major.
void to_host(Device& device, const Tensor& tensor, void* dst, size_t bytes);
std::vector<std::byte> to_host(Device& device, const Tensor& tensor);
// to_host, waiting at most `timeout_ns` for the GPU: false (and `dst` untouched) when that was
// not enough. A caller that must not block for long (a BEAM scheduler) tries this first.
bool try_to_host(Device& device, const Tensor& tensor, void* dst, size_t bytes, uint64_t timeout_ns);
// A row-major copy of any view (the tensor itself when already contiguous at offset 0).
Tensor contiguous(Device& device, const Tensor& tensor);

// Views (no copy): Nx-style broadcast to `shape` (`axes` maps each input axis to an output
// axis; empty = align trailing axes), a transpose, and a strided slice.
Tensor broadcast_view(const Tensor& t, const Shape& shape, const std::vector<int64_t>& axes = {});
Tensor transpose_view(const Tensor& t, const std::vector<int64_t>& axes);
Tensor slice_view(const Tensor& t, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& lengths, const std::vector<int64_t>& steps);
Tensor reshape_view(const Tensor& t, const Shape& shape);  // contiguous input only

}  // namespace nxv
