# The same compiled program on two devices at once, from two processes, against one device
# alone (issue 33's partitions target: <= 1.1x). Each process calls a chain of 20 f32 4096^3
# products (one program) `calls` times on its own device and waits for it.
#
#     mix run bench/two_devices.exs [calls]
Nx.global_default_backend(Nx.Vulkan.Backend)

calls = String.to_integer(List.first(System.argv()) || "3")
devices = Nx.Vulkan.devices() |> Enum.map(& &1.index)
IO.puts("devices: #{inspect(Enum.map(Nx.Vulkan.devices(), &{&1.index, &1.name}))}")

chain = fn a, b -> Enum.reduce(1..20, a, fn _, acc -> Nx.dot(acc, b) end) end

setup =
  for d <- Enum.take(devices, 2) do
    backend = {Nx.Vulkan.Backend, device: d}
    a = Nx.iota({4096, 4096}, type: :f32, backend: backend) |> Nx.divide(4096 * 4096)
    b = Nx.eye(4096, type: :f32, backend: backend)
    f = Nx.Defn.jit(chain, compiler: Nx.Vulkan.Compiler, device: d)
    f.(a, b)
    Nx.Vulkan.synchronize(d)
    {d, f, a, b}
  end

work = fn {d, f, a, b} ->
  for _ <- 1..calls, do: f.(a, b)
  Nx.Vulkan.synchronize(d)
end

time = fn fun -> fun |> :timer.tc() |> elem(0) |> Kernel./(1000 * calls) end

for round <- 1..2 do
  one = time.(fn -> work.(hd(setup)) end)

  both =
    time.(fn ->
      setup |> Enum.map(&Task.async(fn -> work.(&1) end)) |> Task.await_many(:infinity)
    end)

  IO.puts(
    "round #{round}: one device #{Float.round(one, 2)} ms per call, #{length(setup)} devices at once " <>
      "#{Float.round(both, 2)} ms (#{Float.round(both / one, 2)}x)"
  )
end
