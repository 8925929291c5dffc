# numpy's side of bench/dot_vs_numpy.exs: reads requests "A_SHAPE B_SHAPE DTYPE REPS" (shapes as
# comma-separated sizes) on stdin, one a line, and answers each with REPS times of `a @ b` in
# microseconds on one line (after one untimed warm-up call per request). Run it with the
# python3 whose numpy uses the BLAS to compare with (Debian's python3-numpy with
# libopenblas0-pthread: /usr/bin/python3).
import sys
import time

import numpy as np

rng = np.random.default_rng(0)
operands = {}


def make(shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-8, 8, size=shape).astype(dtype)
    return rng.random(shape, dtype=np.float64).astype(dtype)


print(f"numpy {np.__version__}", flush=True)
for line in sys.stdin:
    a_shape, b_shape, dtype, reps = line.split()
    key = (a_shape, b_shape, dtype)
    if key not in operands:
        dt = np.dtype(dtype)
        shape = lambda s: tuple(int(x) for x in s.split(","))
        operands[key] = (make(shape(a_shape), dt), make(shape(b_shape), dt))
    a, b = operands[key]
    a @ b
    times = []
    for _ in range(int(reps)):
        t = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t) * 1e6)
    print(" ".join(f"{t:.1f}" for t in times), flush=True)
