# A data-dependent `while` of 1000 cheap iterations (its trip count is known only by running
# it), compiled by Nx.Vulkan.Compiler and run through Nx.Defn.Evaluator on Nx.Vulkan.Backend
# and on Nx.BinaryBackend:
#
#     mix run bench/while_loop.exs
#
# Compiled, the loop kernel runs up to 1024 trips a launch and reads the predicate once per
# launch; without it (`loop_kernel: false`), the first four trips are a program each, then
# blocks of 32 trips.
defmodule WhileLoop do
  import Nx.Defn

  defn grow(x, limit) do
    {x, n, _} =
      while {x, n = 0, limit}, Nx.sum(x) < limit do
        {x * 1.001 + 0.5, n + 1, limit}
      end

    {x, n}
  end
end

x0 = Nx.iota({16}, type: :f32) |> Nx.divide(100)
# About 1000 trips from x0 (found by running the loop).
limit = 14_000.0

# The last run without the loop kernel: blocks of 32 trips, each a program, the predicate read
# once per block.
runs = [
  {"BinaryBackend + Evaluator", Nx.BinaryBackend, Nx.Defn.Evaluator, 3, []},
  {"Vulkan + Evaluator", Nx.Vulkan.Backend, Nx.Defn.Evaluator, 3, []},
  {"Vulkan + Nx.Vulkan.Compiler", Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 10, []},
  {"Vulkan + Nx.Vulkan.Compiler, loop_kernel: false", Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 10,
   [loop_kernel: false]}
]

IO.puts("device: #{Nx.Vulkan.device_info().name}")

for {name, backend, compiler, n, opts} <- runs do
  x = Nx.backend_copy(x0, backend)
  l = Nx.tensor(limit, backend: backend)
  fun = Nx.Defn.jit(&WhileLoop.grow/2, [compiler: compiler] ++ opts)
  {_, trips} = fun.(x, l)
  trips = Nx.to_number(trips)
  {us, _} = :timer.tc(fn -> for _ <- 1..n, do: fun.(x, l) |> elem(0) |> Nx.to_binary() end)
  IO.puts("#{name}: #{trips} trips, #{Float.round(us / n / trips, 2)} us per trip")
end
