# One HMC trajectory (32 leapfrog steps) on a Bayesian logistic regression log-posterior
# (d = 8 parameters, n = 200 observations, f64, gradients by `grad`, the loop a `defn` while),
# the work of a sampler's inner loop, run three ways:
#
#     mix run bench/hmc.exs     # HMC_RUNS=binary,evaluator,compiler,chains (the default), unrolled
#                               # HMC_SPLIT=1: host and wait time per call, and a one-op floor
#
# Nx.BinaryBackend with Nx.Defn.Evaluator, and Nx.Vulkan.Backend with Nx.Defn.Evaluator and
# with Nx.Vulkan.Compiler (the loop in one launch: the engine's loop kernel; `unrolled` records
# its 32 trips' launches instead); `chains` runs 128 chains at once through the compiler (the state
# vectorized over a :chain axis, one trajectory of each per call). Each figure is the mean
# (and the median) over calls after warm-up, each trajectory's end point read back (a sampler
# reads it to accept or reject). bench/hmc_jax.py is JAX's twin (lax.fori_loop, the same model
# and data): run both in one command.
Code.require_file("../examples/logistic_posterior.exs", __DIR__)

defmodule HMC do
  import Nx.Defn
  import LogisticPosterior, only: [log_posterior: 3]

  @steps 32

  defn trajectory(q, p, x, y, eps) do
    {q, p, _, _, _, _} =
      while {q, p, x, y, eps, i = 0}, i < @steps do
        p = p + 0.5 * eps * grad(q, &log_posterior(&1, x, y))
        q = q + eps * p
        p = p + 0.5 * eps * grad(q, &log_posterior(&1, x, y))
        {q, p, x, y, eps, i + 1}
      end

    {q, p}
  end

  # The same data as bench/hmc_jax.py.
  def data do
    {x, y} = LogisticPosterior.data()
    # A tensor of its own, as JAX's twin and a sampler's state are (a broadcast view would be
    # copied on every call).
    q = Nx.tensor(List.duplicate(0.1, 8), type: :f64)
    p = Nx.linspace(0.5, -0.5, n: 8, type: :f64)
    {q, p, x, y, Nx.tensor(0.01, type: :f64)}
  end
end

runs = %{
  "binary" => {"BinaryBackend + Evaluator", Nx.BinaryBackend, Nx.Defn.Evaluator, 5, 1},
  "evaluator" => {"Vulkan + Evaluator", Nx.Vulkan.Backend, Nx.Defn.Evaluator, 20, 1},
  "compiler" => {"Vulkan + Nx.Vulkan.Compiler", Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 1000, 1},
  "unrolled" =>
    {"Vulkan + Nx.Vulkan.Compiler, trips recorded (loop_kernel: false)", Nx.Vulkan.Backend,
     {Nx.Vulkan.Compiler, loop_kernel: false}, 200, 1},
  "chains" =>
    {"Vulkan + Nx.Vulkan.Compiler, 128 chains", Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 50, 128}
}

IO.puts("device: #{Nx.Vulkan.device_info().name}")

:telemetry.attach(
  :hmc_compilation,
  [:nx_vulkan, :compilation],
  fn _, time, meta, _ ->
    IO.puts(
      "  compiled in #{div(time.total_time, 1000)} ms: #{meta.mode}, #{meta.nodes} nodes, " <>
        "#{meta.fused} fused, #{meta.launches} launches, #{meta[:host_steps] || 0} host steps, " <>
        "#{meta[:loop_kernels] || 0} loop kernels#{if meta.reason, do: " (#{meta.reason})"}" <>
        Enum.map_join(meta[:loop_kernel_refusals] || [], &"; loop kernel refused: #{&1}")
    )
  end,
  nil
)

# Chain c starts at q + 0.001 c (chain 0 is the single chain's start).
vectorized = fn t, chains ->
  offsets = Nx.iota({chains, 1}, type: :f64) |> Nx.multiply(0.001)
  t |> Nx.broadcast({chains, 8}) |> Nx.add(offsets) |> Nx.vectorize(:chain)
end

for key <- String.split(System.get_env("HMC_RUNS", "binary,evaluator,compiler,chains"), ","),
    key != "" do
  {name, backend, compiler, n, chains} = Map.fetch!(runs, key)
  Nx.default_backend(backend)
  {q, p, x, y, eps} = Nx.with_default_backend(backend, &HMC.data/0)
  {q, p} = if chains > 1, do: {vectorized.(q, chains), vectorized.(p, chains)}, else: {q, p}
  {compiler, opts} = if is_tuple(compiler), do: compiler, else: {compiler, []}
  fun = Nx.Defn.jit(&HMC.trajectory/5, [compiler: compiler] ++ opts)

  call = fn ->
    {q, _p} = fun.(q, p, x, y, eps)
    q |> Nx.devectorize() |> Nx.to_binary()
  end

  for _ <- 1..3, do: call.()
  if backend == Nx.Vulkan.Backend, do: Nx.Vulkan.kernel_profile()
  # Each call timed alone: the mean, and the median (robust to the host's occasional stalls).
  {times, q_end} =
    Enum.map_reduce(1..n, nil, fn _, _ ->
      t0 = System.monotonic_time(:nanosecond)
      q_end = call.()
      {(System.monotonic_time(:nanosecond) - t0) / 1000, q_end}
    end)

  us = Enum.sum(times)
  median = Enum.at(Enum.sort(times), div(n, 2))
  first = q_end |> Nx.from_binary(:f64) |> Nx.to_flat_list() |> hd()

  IO.puts(
    "#{name}: #{Float.round(us / n, 1)} us per trajectory (median #{Float.round(median, 1)}), " <>
      "#{Float.round(us / n / 32, 2)} us per step (q[0] after: #{Float.round(first, 9)})"
  )

  # NX_VULKAN_PROFILE=1: GPU time per kernel and trajectory, from timestamps (which add a little).
  profile = if backend == Nx.Vulkan.Backend, do: Nx.Vulkan.kernel_profile(), else: []

  if profile != [] do
    busy = Enum.sum(Enum.map(profile, &elem(&1, 2))) / n
    IO.puts("  GPU busy #{Float.round(busy, 1)} us per trajectory; kernels (us, dispatches):")

    for {kernel, count, us} <- Enum.take(profile, 10) do
      IO.puts(
        "    #{Float.round(us / n, 1)}  #{Float.round(count / n, 1)}x  #{String.slice(kernel, 0, 110)}"
      )
    end
  end

  # Where a call's time goes: the host's time to make the call (its programs recorded, not
  # waited for), then the wait for the GPU and the read back; submissions per call.
  if backend == Nx.Vulkan.Backend and System.get_env("HMC_SPLIT") == "1" do
    before = Nx.Vulkan.stream_statistics()

    {host, wait} =
      Enum.reduce(1..n, {0, 0}, fn _, {host, wait} ->
        t0 = System.monotonic_time(:nanosecond)
        {q, _p} = fun.(q, p, x, y, eps)
        t1 = System.monotonic_time(:nanosecond)
        q |> Nx.devectorize() |> Nx.to_binary()
        t2 = System.monotonic_time(:nanosecond)
        {host + t1 - t0, wait + t2 - t1}
      end)

    stats = Nx.Vulkan.stream_statistics()

    # The floor: a compiled call of one elementwise op on the same inputs, read back alike.
    floor = Nx.Defn.jit(fn q, p -> Nx.add(q, p) end, compiler: compiler)
    for _ <- 1..3, do: floor.(q, p) |> Nx.devectorize() |> Nx.to_binary()

    {floor_us, _} =
      :timer.tc(fn -> for _ <- 1..n, do: floor.(q, p) |> Nx.devectorize() |> Nx.to_binary() end)

    IO.puts("  a one-op compiled call read back alike: #{Float.round(floor_us / n, 1)} us")

    IO.puts(
      "  host #{Float.round(host / n / 1000, 1)} us, wait and read back " <>
        "#{Float.round(wait / n / 1000, 1)} us per call; " <>
        "#{Float.round((stats.submits - before.submits) / n, 2)} submits, " <>
        "#{Float.round((stats.commands - before.commands) / n, 1)} commands per call"
    )
  end
end
