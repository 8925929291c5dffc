# A classical-ML fit: 100 steps of gradient descent on a logistic regression (150 x 4, f32,
# the size of the iris data), the loop a `defn` while, run three ways:
#
#     mix run bench/logistic_fit.exs
#
# Nx.BinaryBackend with Nx.Defn.Evaluator, and Nx.Vulkan.Backend with Nx.Defn.Evaluator and
# with Nx.Vulkan.Compiler (the loop has a fixed trip count: one program per fit). Each figure
# is the mean over fits after warm-up, the coefficients read back.
defmodule LogisticFit do
  import Nx.Defn

  defn loss(w, b, x, y) do
    z = Nx.dot(x, w) + b
    Nx.mean(Nx.max(z, 0) - z * y + Nx.log1p(Nx.exp(-Nx.abs(z))))
  end

  defn fit(x, y) do
    w = Nx.broadcast(Nx.tensor(0.0, type: :f32), {4})
    b = Nx.tensor(0.0, type: :f32)

    {w, b, _, _, _} =
      while {w, b, x, y, i = 0}, i < 100 do
        {gw, gb} = grad({w, b}, fn {w, b} -> loss(w, b, x, y) end)
        {w - 0.5 * gw, b - 0.5 * gb, x, y, i + 1}
      end

    {w, b}
  end

  def data do
    x = Nx.iota({150, 4}, type: :f32) |> Nx.multiply(0.37) |> Nx.sin()
    y = x |> Nx.dot(Nx.tensor([1.0, -2.0, 0.5, 1.5])) |> Nx.greater(0) |> Nx.as_type(:f32)
    {x, y}
  end
end

runs = [
  {"BinaryBackend + Evaluator", Nx.BinaryBackend, Nx.Defn.Evaluator, 5},
  {"Vulkan + Evaluator", Nx.Vulkan.Backend, Nx.Defn.Evaluator, 3},
  {"Vulkan + Nx.Vulkan.Compiler", Nx.Vulkan.Backend, Nx.Vulkan.Compiler, 20}
]

IO.puts("device: #{Nx.Vulkan.device_info().name}")

:telemetry.attach(
  :logistic_fit_compilation,
  [:nx_vulkan, :compilation],
  fn _, time, meta, _ ->
    IO.puts(
      "  compiled in #{div(time.total_time, 1000)} ms: #{meta.mode}, #{meta.nodes} nodes, " <>
        "#{meta.launches} launches, #{meta[:loop_kernels] || 0} loop kernels" <>
        Enum.map_join(meta[:loop_kernel_refusals] || [], &"; loop kernel refused: #{&1}")
    )
  end,
  nil
)

for {name, backend, compiler, n} <- runs do
  {x, y} = Nx.with_default_backend(backend, &LogisticFit.data/0)
  fun = Nx.Defn.jit(&LogisticFit.fit/2, compiler: compiler)
  call = fn -> fun.(x, y) |> elem(0) |> Nx.to_flat_list() end
  call.()
  {us, w} = :timer.tc(fn -> Enum.reduce(1..n, nil, fn _, _ -> call.() end) end)
  w = Enum.map(w, &Float.round(&1, 5))
  IO.puts("#{name}: #{Float.round(us / n / 1000, 2)} ms per fit of 100 steps (w #{inspect(w)})")
end
