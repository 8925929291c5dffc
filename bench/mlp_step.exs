# One training step of an MNIST-size MLP (784-1024-1024-10, ReLU, softmax cross-entropy, SGD
# at 0.01), f32, as `jax_ops.py mlp` times it on the same GPU: run both in one command.
#
#     mix run bench/mlp_step.exs [batch ...]        # default batches: 16 256 1024
#     MLP_COMPILERS=vulkan mix run bench/mlp_step.exs 256
#
# (NX_PATH etc. as for the Elixir suite.) The step is a `defn` with `value_and_grad`, run by
# each compiler of MLP_COMPILERS (default "evaluator,vulkan"): Nx.Defn.Evaluator (op by op on
# Nx.Vulkan.Backend, re-tracing every call) and Nx.Vulkan.Compiler (one cached program per
# call; "vulkan-donate": the parameters donated to each step), with host fallback refused. Each figure is the mean over a run of steps after
# warm-up, the loss read back once at the end (JAX likewise waits once). Also printed: the
# step's commands and submissions, the compiled program's nodes, fused nodes and launches,
# and with NX_VULKAN_PROFILE=1 the GPU time per kernel (Nx.Vulkan.kernel_profile/1; the largest
# MLP_KERNEL_ROWS of them, default 12).
Nx.global_default_backend(Nx.Vulkan.Backend)
Application.put_env(:nx_vulkan, :host_fallback, :raise)

defmodule MLPStep do
  import Nx.Defn

  defn loss({w1, b1, w2, b2, w3, b3}, x, y) do
    h = Nx.max(Nx.dot(x, w1) + b1, 0)
    h = Nx.max(Nx.dot(h, w2) + b2, 0)
    logits = Nx.dot(h, w3) + b3
    shifted = logits - Nx.reduce_max(logits, axes: [1], keep_axes: true)
    log_softmax = shifted - Nx.log(Nx.sum(Nx.exp(shifted), axes: [1], keep_axes: true))
    -Nx.mean(Nx.sum(log_softmax * y, axes: [1]))
  end

  defn step(params, x, y) do
    {l, g} = value_and_grad(params, &loss(&1, x, y))
    {w1, b1, w2, b2, w3, b3} = params
    {g1, gb1, g2, gb2, g3, gb3} = g

    {{w1 - 0.01 * g1, b1 - 0.01 * gb1, w2 - 0.01 * g2, b2 - 0.01 * gb2, w3 - 0.01 * g3,
      b3 - 0.01 * gb3}, l}
  end
end

compilers =
  System.get_env("MLP_COMPILERS", "evaluator,vulkan")
  |> String.split(",", trim: true)
  |> Enum.map(fn
    "evaluator" -> {"evaluator", Nx.Defn.Evaluator, false}
    "vulkan" -> {"vulkan", Nx.Vulkan.Compiler, false}
    # The parameters donated to each step (Nx.donatable/1), as a training loop would.
    "vulkan-donate" -> {"vulkan-donate", Nx.Vulkan.Compiler, true}
  end)

:telemetry.attach(
  :mlp_step_compilation,
  [:nx_vulkan, :compilation],
  fn _, m, meta, _ ->
    IO.puts(
      "  compiled: #{meta.mode}#{if meta.reason, do: " (#{meta.reason})"}, #{meta.nodes} nodes, " <>
        "#{meta.fused} fused, #{meta.launches} launches, #{meta.in_place} in place, " <>
        "#{div(meta.run_bytes, 1024)} KiB a run; trace #{div(m.trace_time, 1000)} ms, " <>
        "lowering #{div(m.lower_time, 1000)} ms, engine #{div(m.compile_time, 1000)} ms"
    )
  end,
  nil
)

batches =
  case System.argv() do
    [] -> [16, 256, 1024]
    args -> Enum.map(args, &String.to_integer/1)
  end

IO.puts("device: #{Nx.Vulkan.device_info().name}")

for batch <- batches, {compiler_name, compiler, donate} <- compilers do
  key = Nx.Random.key(42)
  {w1, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {784, 1024}, type: :f32)
  {w2, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {1024, 1024}, type: :f32)
  {w3, key} = Nx.Random.normal(key, 0.0, 0.05, shape: {1024, 10}, type: :f32)
  {x, key} = Nx.Random.uniform(key, shape: {batch, 784}, type: :f32)
  {labels, _key} = Nx.Random.randint(key, 0, 10, shape: {batch}, type: :s32)
  y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, 10})) |> Nx.as_type(:f32)

  params =
    {w1, Nx.broadcast(0.0, {1024}), w2, Nx.broadcast(0.0, {1024}), w3, Nx.broadcast(0.0, {10})}

  step = Nx.Defn.jit(&MLPStep.step/3, compiler: compiler)

  run = fn params, n ->
    Enum.reduce(1..n, {params, nil}, fn _, {p, _} ->
      step.(if(donate, do: Nx.donatable(p), else: p), x, y)
    end)
  end

  {params, l0} = run.(params, 5)
  first_loss = Nx.to_number(l0)
  Nx.Vulkan.kernel_profile()
  stats0 = Nx.Vulkan.stream_statistics()
  n = if batch >= 1024, do: 100, else: 200

  {t_us, {_params, l}} =
    :timer.tc(fn ->
      {p, l} = run.(params, n)
      Nx.to_number(l)
      {p, l}
    end)

  stats1 = Nx.Vulkan.stream_statistics()
  profile = Nx.Vulkan.kernel_profile()
  submits = (stats1.submits - stats0.submits) / n
  commands = (stats1.commands - stats0.commands) / n

  IO.puts(
    "mlp step batch=#{batch} f32 #{compiler_name}: #{Float.round(t_us / n / 1000, 3)} ms " <>
      "(loss #{Float.round(first_loss, 4)} -> #{Float.round(Nx.to_number(l), 4)}, " <>
      "#{Float.round(commands, 1)} commands, #{Float.round(submits, 1)} submits per step)"
  )

  # NX_VULKAN_PROFILE=1: GPU time per kernel and step, from timestamps (which add a little).
  if profile != [] do
    busy = Enum.sum(Enum.map(profile, &elem(&1, 2))) / n

    IO.puts(
      "  GPU busy #{Float.round(busy, 1)} us per step; largest kernels (us per step, dispatches):"
    )

    for {kernel, count, us} <- Enum.take(profile, String.to_integer(System.get_env("MLP_KERNEL_ROWS", "12"))) do
      IO.puts(
        "    #{Float.round(us / n, 1)}  #{Float.round(count / n, 1)}x  #{String.slice(kernel, 0, String.to_integer(System.get_env("MLP_KERNEL_CHARS", "150")))}"
      )
    end
  end
end

IO.puts("host fallbacks: #{inspect(Nx.Vulkan.fallback_counts())}")
