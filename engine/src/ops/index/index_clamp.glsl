// An index of any integer type, read and clamped into [0, dim): the one place the index
// kernels read indices (Nx leaves out-of-range indices to the backend; XLA clamps gathers).
layout(buffer_reference, std430, buffer_reference_align = IDX_ALIGN) readonly buffer IdxBuf { IDX_STORE v[]; };

uint clamped_index(uvec2 addr, uint at, uint dim) {
  IDX_STORE raw = IdxBuf(addr).v[at];
#if IDX_WIDE && IDX_SIGNED
  return uint(clamp(int64_t(raw), int64_t(0), int64_t(dim) - 1));
#elif IDX_WIDE
  return uint(min(uint64_t(raw), uint64_t(dim - 1u)));
#elif IDX_SIGNED
  return uint(clamp(int(raw), 0, int(dim) - 1));
#else
  return min(uint(raw), dim - 1u);
#endif
}

// Whether an index is inside [0, dim) (scatter drops updates whose index is not, as XLA does).
bool index_inside(uvec2 addr, uint at, uint dim, out uint index) {
  IDX_STORE raw = IdxBuf(addr).v[at];
#if IDX_WIDE && IDX_SIGNED
  int64_t x = int64_t(raw);
  index = uint(x);
  return x >= 0 && x < int64_t(dim);
#elif IDX_WIDE
  uint64_t x = uint64_t(raw);
  index = uint(x);
  return x < uint64_t(dim);
#elif IDX_SIGNED
  int x = int(raw);
  index = uint(x);
  return x >= 0 && x < int(dim);
#else
  index = uint(raw);
  return index < dim;
#endif
}
