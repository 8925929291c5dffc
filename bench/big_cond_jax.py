# JAX's twin of bench/big_cond.exs: the same cond (lax.cond; in a lax.fori_loop of 20 trips) jitted,
# called in a chain, one read back at the end.  python3 bench/big_cond_jax.py [calls]
import sys
import time

import jax
import jax.numpy as jnp


def many_ops(x):
    for i in range(1, 151):
        x = jnp.sin(x) * (1 + i / 1000)
    return x


@jax.jit
def step(x):
    return jax.lax.cond(jnp.mean(x) > 0, lambda x: many_ops(x) - 0.25, lambda x: many_ops(x + 1), x)


@jax.jit
def steps(x):
    return jax.lax.fori_loop(0, 20, lambda i, x: step(x), x)


calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
print("device:", jax.devices()[0])
for name, f, n in [("cond", step, calls), ("20 trips", steps, calls // 20)]:
    for size in [4096, 1048576]:
        x0 = jnp.arange(size, dtype=jnp.float32) / size - 0.4

        def run():
            x = x0
            for _ in range(n):
                x = f(x)
            x.block_until_ready()

        run()
        times = []
        for _ in range(5):
            t = time.perf_counter()
            run()
            times.append((time.perf_counter() - t) / n * 1e6)
        times.sort()
        print(f"{name}, f32[{size}]: {times[0]:.1f} us per call (median {times[2]:.1f})")
