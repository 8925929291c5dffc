"""Side-by-side figure for bench/RESULTS.md: f32 add at 256M elements in XLA (JAX) on the same GPU.
Reports GB/s moved (2 reads + 1 write) per op, like BM_AddF32, on non-constant data in [0, 1)
(as bench/elementwise_bench.cpp uses) and on zeros + ones (constant buffers may read faster)."""
import time

import jax
import jax.numpy as jnp

n = 256 << 20
i = jnp.arange(n, dtype=jnp.float32)
ramp_a = jnp.mod(jnp.mod(i, 65521.0) * 0.618034 + 0.25, 1.0)
ramp_b = jnp.mod(jnp.mod(i, 65521.0) * 0.618034 + 0.5, 1.0)
add = jax.jit(lambda x, y: x + y)
reps = 50
for name, x, y in [("non-constant", ramp_a, ramp_b), ("zeros+ones", jnp.zeros_like(i), jnp.ones_like(i))]:
    add(x, y).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(reps):
        c = add(x, y)
    c.block_until_ready()
    dt = (time.perf_counter() - t0) / reps
    kind = jax.devices()[0].device_kind
    print(f"xla add f32 {name} n={n}: {dt * 1e6:.1f} us/op, {3 * 4 * n / dt / 1e9:.1f} GB/s ({kind})")
