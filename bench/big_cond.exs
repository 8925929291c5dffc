# A `cond` too large to compute whole (each branch more nodes than the compiler selects
# between) called in a chain, each call's result the next one's input, compiled by
# Nx.Vulkan.Compiler, one read back at the end:
#
#     mix run bench/big_cond.exs [calls]
#
# Where the device has conditional rendering the cond is decided on the device and a call
# waits for nothing; with NX_VULKAN_DISABLE=conditional_rendering its predicate is read on the
# host, one wait per call. The same cond in a counted loop of 20 trips reads nothing either
# (else a wait per trip). JAX's twin: python3 bench/big_cond_jax.py
defmodule BigCond do
  import Nx.Defn

  deftransformp many_ops(x),
    do: Enum.reduce(1..150, x, fn i, acc -> Nx.multiply(Nx.sin(acc), 1 + i / 1000) end)

  defn step(x) do
    if Nx.mean(x) > 0 do
      many_ops(x) - 0.25
    else
      many_ops(x + 1)
    end
  end

  # The same cond in a counted loop of 20 trips.
  defn steps(x) do
    {x, _} = while {x, i = 0}, i < 20, do: {step(x), i + 1}
    x
  end
end

calls = String.to_integer(List.first(System.argv()) || "200")
info = Nx.Vulkan.device_info()
IO.puts("device: #{info.name}, conditional rendering: #{info.features.conditional_rendering}")

for {name, f, calls} <- [
      {"cond", &BigCond.step/1, calls},
      {"20 trips", &BigCond.steps/1, div(calls, 20)}
    ],
    size <- [4096, 1_048_576] do
  fun = Nx.Defn.jit(f, compiler: Nx.Vulkan.Compiler)
  x0 = Nx.iota({size}, type: :f32) |> Nx.divide(size) |> Nx.subtract(0.4)
  x0 = Nx.backend_copy(x0, Nx.Vulkan.Backend)
  run = fn -> Enum.reduce(1..calls, x0, fn _, x -> fun.(x) end) |> Nx.to_binary() end
  run.()

  times =
    for _ <- 1..5 do
      before = Nx.Vulkan.stream_statistics()
      {us, _} = :timer.tc(run)
      waits = Nx.Vulkan.stream_statistics().waits - before.waits
      {us / calls, waits}
    end

  {best, _} = Enum.min_by(times, &elem(&1, 0))
  median = times |> Enum.map(&elem(&1, 0)) |> Enum.sort() |> Enum.at(2)
  {_, waits} = hd(times)

  IO.puts(
    "#{name}, f32[#{size}]: #{Float.round(best, 1)} us per call (median #{Float.round(median, 1)}), " <>
      "#{waits} host waits in #{calls} calls"
  )
end
