# The cost of one small eager op from Elixir (the Nx call, the backend, the NIF, recording on
# the device's stream), pipelined and synchronous with its download: the figures that the
# engine's own floor (`build/bench/nxv_bench --benchmark_filter=SmallOp`, the same ops from
# C++) is compared with. Run in the same command as that benchmark:
#
#     mix run bench/eager_overhead.exs
#
# (NX_PATH etc. as for the Elixir suite.) The pipelined figure is also split by layer.
Nx.global_default_backend(Nx.Vulkan.Backend)
a = Nx.iota({1000}, type: :f32)
b = Nx.iota({1000}, type: :f32)

per_op_us = fn n, fun ->
  fun.()
  Nx.Vulkan.synchronize()

  {us, _} =
    :timer.tc(fn ->
      for _ <- 1..n, do: fun.()
      Nx.Vulkan.synchronize()
    end)

  us / n
end

best = fn n, fun -> Enum.min(for _ <- 1..5, do: per_op_us.(n, fun)) end

IO.puts("device: #{Nx.Vulkan.device_info().name}")

submits_before = Nx.Vulkan.stream_statistics().submits
pipelined = best.(5000, fn -> Nx.add(a, b) end)
submits = (Nx.Vulkan.stream_statistics().submits - submits_before) / (5 * 5001)

IO.puts(
  "pipelined Nx.add of f32[1000]: #{Float.round(pipelined, 2)} us per op " <>
    "(#{Float.round(submits, 3)} submits per op)"
)

synchronous = best.(1000, fn -> Nx.add(a, b) |> Nx.to_binary() end)

IO.puts(
  "synchronous Nx.add of f32[1000] + Nx.to_binary: #{Float.round(synchronous, 2)} us per op"
)

# Where the pipelined figure goes, layer by layer: the backend callback without Nx's front end
# (type and shape inference), and the NIF call alone (the engine's recording plus the NIF).
out = %{a | data: nil}
callback = best.(5000, fn -> Nx.Vulkan.Backend.add(out, a, b) end)
IO.puts("  of which the backend callback (no Nx front end): #{Float.round(callback, 2)} us")
{:ok, {id, _}} = Nx.Vulkan.Native.native_entry(:add, {:f, 32}, [a, b])
refs = [a.data.ref, b.data.ref]
nif = best.(5000, fn -> Nx.Vulkan.NIF.op(a.data.device, id, {:f, 32}, {1000}, refs, []) end)
IO.puts("  of which the NIF call alone: #{Float.round(nif, 2)} us")

# Scalars, where eager scripts and the Evaluator live: an upload, arithmetic (on a CPU driver
# with nothing in flight the host computes it at once), a transcendental (a kernel), and
# the process's user and system time over a loop of each (/proc/self/stat, Linux).
s1 = Nx.tensor(1.5)
s2 = Nx.tensor(2.25)
IO.puts("Nx.tensor(scalar): #{Float.round(best.(5000, fn -> Nx.tensor(3.0) end), 2)} us")

ticks = fn ->
  case File.read("/proc/self/stat") do
    {:ok, stat} ->
      [_, rest] = String.split(stat, ") ", parts: 2)
      fields = String.split(rest, " ")
      {String.to_integer(Enum.at(fields, 11)), String.to_integer(Enum.at(fields, 12))}

    _ ->
      {0, 0}
  end
end

for {name, fun} <- [
      {"scalar Nx.add |> Nx.to_number", fn -> Nx.add(s1, s2) |> Nx.to_number() end},
      {"scalar Nx.exp |> Nx.to_number", fn -> Nx.exp(s1) |> Nx.to_number() end}
    ] do
  us = best.(2000, fun)
  {u0, k0} = ticks.()
  for _ <- 1..20_000, do: fun.()
  {u1, k1} = ticks.()

  IO.puts(
    "#{name}: #{Float.round(us, 2)} us; 20000 of them: user #{u1 - u0}, system #{k1 - k0} ticks"
  )
end
