// Push constants of the triangular solve (ops/linalg/triangular_solve.cpp, trsv.comp): a
// workgroup per right-hand side of each batch solves M y = c by substitution.
#ifndef NXV_TRIANGULAR_SOLVE_PUSH_H
#define NXV_TRIANGULAR_SOLVE_PUSH_H
#include "nxv_shared.h"

NXV_STRUCT(TriangularSolvePush) {
  NXV_ADDR a_addr;  // [batch, n, n] row-major
  NXV_ADDR b_addr;  // the right-hand sides, row-major
  NXV_ADDR x_addr;  // the solutions, laid out as b
  NXV_U32 n;
  NXV_U32 rhs;         // right-hand sides per batch
  NXV_U32 batches;
  NXV_U32 b_batch;     // elements of b per batch
  NXV_U32 rhs_stride;  // between right-hand sides in b
  NXV_U32 elem_stride; // between a right-hand side's elements in b
  NXV_U32 transposed;  // M[i][j] = A[j][i]
  NXV_U32 conjugate;   // M = conj(A) (complex)
  NXV_U32 lower;       // M is lower triangular (forward substitution), else upper
  NXV_U32 pad;
};

#endif
