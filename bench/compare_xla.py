"""Side-by-side figure for bench/RESULTS.md: f32 add at 256M elements in XLA (JAX) on the same GPU.
Reports GB/s moved (2 reads + 1 write) per op, like BM_AddF32."""
import time

import jax
import jax.numpy as jnp

n = 256 << 20
a = jnp.zeros((n,), jnp.float32)
b = jnp.ones((n,), jnp.float32)
add = jax.jit(lambda x, y: x + y)
add(a, b).block_until_ready()
reps = 50
t0 = time.perf_counter()
for _ in range(reps):
    c = add(a, b)
c.block_until_ready()
dt = (time.perf_counter() - t0) / reps
print(f"xla add f32 n={n}: {dt * 1e6:.1f} us/op, {3 * 4 * n / dt / 1e9:.1f} GB/s ({jax.devices()[0].device_kind})")
