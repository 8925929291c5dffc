# JAX (XLA, precision "highest": full f32) on the MLP step's products, for bench/dot_bench.cpp's
# BM_Train_* figures. Each product is timed as ten distinct products in one jitted call (ten
# operand pairs, so XLA cannot merge or hoist them), calls pipelined; per product = call / 10.
# Also batch 16's products (SHAPES16), and the step's eight products together in one call (batch 256).
#     python3 bench/dot_training_jax.py
import time, jax, jax.numpy as jnp

R = 10
SHAPES = [  # m, k, n, layout as in dot_bench.cpp: AB, AtB (A stored [k, m]), ABt (B stored [n, k])
    (256, 784, 1024, "AB"), (256, 1024, 1024, "AB"), (256, 1024, 10, "AB"),
    (1024, 256, 1024, "AtB"), (784, 256, 1024, "AtB"), (1024, 256, 10, "AtB"),
    (256, 1024, 1024, "ABt"), (256, 10, 1024, "ABt")]
# Batch 16's products that dot_bench.cpp times (BM_Train_16x*, BM_Train_784x16x1024_AtB).
SHAPES16 = [(16, 784, 1024, "AB"), (16, 1024, 1024, "AB"), (16, 1024, 1024, "ABt"), (784, 16, 1024, "AtB")]


def operands(key, m, k, n, layout):
    ka, kb = jax.random.split(key)
    a = jax.random.normal(ka, (k, m) if layout == "AtB" else (m, k), jnp.float32)
    b = jax.random.normal(kb, (n, k) if layout == "ABt" else (k, n), jnp.float32)
    return a, b


def product(a, b, layout):
    if layout == "AtB": return jnp.matmul(a.T, b, precision="highest")
    if layout == "ABt": return jnp.matmul(a, b.T, precision="highest")
    return jnp.matmul(a, b, precision="highest")


def timed(f, args, n=50):
    r = f(*args); jax.block_until_ready(r)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:
        r = f(*args); jax.block_until_ready(r)
    t = time.perf_counter()
    for _ in range(n): r = f(*args)
    jax.block_until_ready(r)
    return (time.perf_counter() - t) / n


print(f"jax {jax.__version__} on {jax.devices()[0]}", flush=True)
keys = jax.random.split(jax.random.PRNGKey(0), R)
step = []
for (m, k, n, layout) in SHAPES + SHAPES16:
    pairs = [operands(keys[i], m, k, n, layout) for i in range(R)]
    f = jax.jit(lambda ps, layout=layout: [product(a, b, layout) for a, b in ps])
    t = timed(f, (pairs,)) / R
    print(f"train dot {m}x{k}x{n} {layout}: {t*1e6:.1f} us  {2*m*k*n/t/1e12:.2f} TFLOP/s", flush=True)
    if (m, k, n, layout) in SHAPES: step.append(pairs[0])
f = jax.jit(lambda ps: [product(a, b, s[3]) for (a, b), s in zip(ps, SHAPES)])
t = timed(f, (step,))
print(f"train dot all eight in one call: {t*1e6:.1f} us", flush=True)
