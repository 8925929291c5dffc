"""JAX's twin of bench/eager_overhead.exs: one small eager op from Python, without jit
(JAX dispatches each jnp call as a cached single-op executable), pipelined and synchronous with
its download; the host's own floor for an eager op on the same GPU. Run in the same command as
ours:

    python3 bench/eager_jax.py
"""
import time

import jax
import jax.numpy as jnp
import numpy as np


def per_op_us(n, fun):
    jax.block_until_ready(fun())
    start = time.perf_counter()
    for _ in range(n):
        r = fun()
    jax.block_until_ready(r)
    return (time.perf_counter() - start) / n * 1e6


def best(n, fun):
    return min(per_op_us(n, fun) for _ in range(5))


def main():
    a = jnp.arange(1000, dtype=jnp.float32)
    b = jnp.arange(1000, dtype=jnp.float32)
    s1 = jnp.float32(1.5)
    s2 = jnp.float32(2.25)
    print(f"device: {jax.devices()[0].device_kind}")
    print(f"JAX pipelined jnp.add of f32[1000]: {best(5000, lambda: jnp.add(a, b)):.2f} us per op")
    sync = best(1000, lambda: np.asarray(jnp.add(a, b)))
    print(f"JAX synchronous jnp.add of f32[1000] + np.asarray: {sync:.2f} us per op")
    scalar = best(1000, lambda: float(jnp.add(s1, s2)))
    print(f"JAX scalar jnp.add + float(): {scalar:.2f} us per op")
    up = best(5000, lambda: jnp.asarray(np.float32(3.0)))
    print(f"JAX jnp.asarray(scalar) upload: {up:.2f} us")


if __name__ == "__main__":
    main()
