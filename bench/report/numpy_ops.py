# numpy on the host CPU: the reference of bench/report/run on CPU drivers (lavapipe), for the
# ops of its benchmark set that a CPU runs in reasonable time, in jax_ops.py's line format.
import time

import numpy as np

N256M = 256 * 1024 * 1024


def bench(f, *a, n=3):
    f(*a)
    t = time.perf_counter()
    for _ in range(n):
        f(*a)
    return (time.perf_counter() - t) / n


def show(name, t, extra):
    print(f"{name}: {t*1e3:.3f} ms  {extra}", flush=True)


rng = np.random.default_rng(0)
m = rng.standard_normal((16384, 16384), dtype=np.float32)
t = bench(lambda x: x.sum(axis=1), m); show("sum last axis f32 16384x16384", t, f"{4*N256M/t/1e9:.2f} GB/s")
t = bench(lambda x: x.sum(axis=0), m); show("sum first axis f32 16384x16384", t, f"{4*N256M/t/1e9:.2f} GB/s")
t = bench(lambda x: x.sum(), m); show("sum all f32 256M", t, f"{4*N256M/t/1e9:.2f} GB/s")
del m
s = rng.standard_normal((8192, 8192), dtype=np.float32)
t = bench(lambda x: np.ascontiguousarray(x.T), s); show("transpose f32 8192x8192", t, f"{8*8192*8192/t/1e9:.2f} GB/s")
keys = rng.standard_normal(1 << 24, dtype=np.float32)
t = bench(np.sort, keys); show("sort 16M f32", t, f"{(1<<24)/t/1e9:.4f} Gkeys/s")
a = rng.standard_normal((4096, 4096), dtype=np.float32)
t = bench(lambda x: x @ x, a); show("dot f32 highest 4096x4096x4096", t, f"{2*4096**3/t/1e12:.4f} TFLOP/s")
sig = (rng.standard_normal((1024, 4096)) + 1j * rng.standard_normal((1024, 4096))).astype(np.complex64)
t = bench(lambda x: np.fft.fft(x, axis=1), sig); show("fft c64 1024 x 4096", t, f"{16*sig.size/t/1e9:.2f} GB/s")
