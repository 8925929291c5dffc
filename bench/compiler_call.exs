# Host cost of a cached Nx.Vulkan.Compiler call from Elixir: the time a call takes to return
# (its launches recorded, not waited for), for functions of 1, ~10 and ~70 launches, against the
# same function run by Nx.Defn.Evaluator on Nx.Vulkan.Backend.
#
#     mix run bench/compiler_call.exs
#
# Each figure is the mean over 2000 calls after warm-up, the device synchronised once at the
# end (included: a slow GPU shows as a higher figure, not a lower one).
Nx.global_default_backend(Nx.Vulkan.Backend)
Application.put_env(:nx_vulkan, :host_fallback, :raise)

defmodule CompilerCall do
  import Nx.Defn

  defn one(x), do: x + 1

  defn ten(x, y) do
    a = Nx.exp(x) * y
    b = Nx.sum(a, axes: [1])
    c = Nx.dot(a, Nx.transpose(y))
    {Nx.tanh(c) + Nx.reshape(b, {8, 1}), Nx.reduce_max(a)}
  end

  defn loss(w, b, x) do
    h = Nx.tanh(Nx.dot(x, w) + b)
    Nx.mean(h * h)
  end

  defn grad_step(w, b, x) do
    {gw, gb} = grad({w, b}, fn {w, b} -> loss(w, b, x) end)
    {w - 0.1 * gw, b - 0.1 * gb}
  end
end

x = Nx.iota({8, 16}, type: :f32) |> Nx.divide(100)
y = Nx.iota({8, 16}, type: :f32) |> Nx.divide(50)
w = Nx.iota({16, 16}, type: :f32) |> Nx.divide(300)
b = Nx.iota({16}, type: :f32) |> Nx.divide(10)

cases = [
  {"one op", &CompilerCall.one/1, [x]},
  {"ten ops", &CompilerCall.ten/2, [x, y]},
  {"grad step", &CompilerCall.grad_step/3, [w, b, x]}
]

:telemetry.attach(
  :compiler_call,
  [:nx_vulkan, :compilation],
  fn _, m, meta, _ ->
    IO.puts(
      "  compiled: #{meta.mode}, #{meta.nodes} nodes, #{meta.launches} launches; " <>
        "trace+lowering #{div(m.trace_time + m.lower_time, 1000)} ms, engine #{div(m.compile_time, 1000)} ms"
    )
  end,
  nil
)

IO.puts("device: #{Nx.Vulkan.device_info().name}")
n = 2000

for {name, fun, args} <- cases, compiler <- [Nx.Defn.Evaluator, Nx.Vulkan.Compiler] do
  jitted = Nx.Defn.jit(fun, compiler: compiler)
  for _ <- 1..50, do: apply(jitted, args)
  Nx.Vulkan.synchronize()

  {us, _} =
    :timer.tc(fn ->
      for _ <- 1..n, do: apply(jitted, args)
      Nx.Vulkan.synchronize()
    end)

  IO.puts("#{name} #{inspect(compiler)}: #{Float.round(us / n, 1)} us per call")
end
