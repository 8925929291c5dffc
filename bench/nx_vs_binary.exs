# Elementwise ops and reductions end to end from Elixir: Nx.Vulkan.Backend against Nx.BinaryBackend on the same
# inputs (1M f32 by default). The Vulkan time covers the Nx call, the NIF, recording and the wait
# for the device (Nx.Vulkan.synchronize/0); tensors stay where they are. Run with
#
#     mix run bench/nx_vs_binary.exs [elements]
#
# (NX_PATH etc. as for the Elixir suite). Prints the time per op on each backend and the ratio.
n = System.argv() |> List.first("1048576") |> String.to_integer()

:rand.seed(:exsss, {1, 2, 3})
random = fn -> for _ <- 1..n, into: <<>>, do: <<:rand.uniform()::float-32-native>> end
x = Nx.from_binary(random.(), :f32, backend: Nx.BinaryBackend)
y = Nx.from_binary(random.(), :f32, backend: Nx.BinaryBackend)
vx = Nx.backend_copy(x, Nx.Vulkan.Backend)
vy = Nx.backend_copy(y, Nx.Vulkan.Backend)

# Median of `reps` runs of `fun`, in microseconds.
time = fn fun, reps ->
  fun.()

  1..reps
  |> Enum.map(fn _ -> fun |> :timer.tc() |> elem(0) end)
  |> Enum.sort()
  |> Enum.at(div(reps, 2))
end

IO.puts("device: #{inspect(Nx.Vulkan.device_info().name)}; #{n} f32 elements")

ops = [
  add: &Nx.add/2,
  multiply: &Nx.multiply/2,
  exp: fn a, _ -> Nx.exp(a) end,
  sum: fn a, _ -> Nx.sum(a) end,
  argmax: fn a, _ -> Nx.argmax(a) end
]

for {name, op} <- ops do
  binary = time.(fn -> op.(x, y) end, 5)

  vulkan =
    time.(
      fn ->
        op.(vx, vy)
        Nx.Vulkan.synchronize()
      end,
      51
    )

  # Same values (to the fixtures' tolerance for exp and the f32 sum) on both backends.
  diff = Nx.subtract(op.(x, y), Nx.backend_transfer(op.(vx, vy), Nx.BinaryBackend))
  max_diff = diff |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()

  IO.puts(
    "#{name}: Nx.BinaryBackend #{binary} us, Nx.Vulkan.Backend #{vulkan} us, " <>
      "#{Float.round(binary / max(vulkan, 1), 1)}x (max |difference| #{max_diff})"
  )
end
