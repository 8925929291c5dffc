"""JAX's twin of bench/hmc.exs: one HMC trajectory (32 leapfrog steps, lax.fori_loop) on the
same Bayesian logistic regression (d = 8, n = 200, f64, the same data), jitted; the mean and median time
per trajectory with its end point read back, as bench/hmc.exs measures ours.

    python3 bench/hmc_jax.py
"""
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

STEPS = 32


def log_posterior(q, x, y):
    z = x @ q
    softplus = jnp.maximum(z, 0) + jnp.log1p(jnp.exp(-jnp.abs(z)))
    return jnp.sum(y * z - softplus) - 0.5 * jnp.sum(q * q)


grad = jax.grad(log_posterior)


@jax.jit
def trajectory(q, p, x, y, eps):
    def step(_, state):
        q, p = state
        p = p + 0.5 * eps * grad(q, x, y)
        q = q + eps * p
        p = p + 0.5 * eps * grad(q, x, y)
        return q, p

    return jax.lax.fori_loop(0, STEPS, step, (q, p))


def data():
    x = jnp.sin(jnp.arange(1, 200 * 8 + 1, dtype=jnp.float64).reshape(200, 8))
    q_true = jnp.linspace(-1.0, 1.0, 8, dtype=jnp.float64)
    y = (x @ q_true > 0).astype(jnp.float64)
    q = jnp.full((8,), 0.1, dtype=jnp.float64)
    p = jnp.linspace(0.5, -0.5, 8, dtype=jnp.float64)
    return q, p, x, y, jnp.float64(0.01)


def main():
    q, p, x, y, eps = data()
    for _ in range(5):
        jax.device_get(trajectory(q, p, x, y, eps)[0])
    n = 1000
    times = []
    for _ in range(n):
        start = time.perf_counter()
        end = jax.device_get(trajectory(q, p, x, y, eps)[0])
        times.append((time.perf_counter() - start) * 1e6)
    us = sum(times) / n
    median = sorted(times)[n // 2]
    print(f"device: {jax.devices()[0].device_kind}")
    print(f"JAX jit + lax.fori_loop: {us:.1f} us per trajectory (median {median:.1f}), "
          f"{us / STEPS:.2f} us per step (q[0] after: {end[0]:.9f})")


if __name__ == "__main__":
    main()
