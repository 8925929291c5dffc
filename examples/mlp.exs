# Trains a small multi-layer perceptron to fit y = sin(x) on Nx.Vulkan.Backend.
#
#     mix run examples/mlp.exs
#
# Every tensor lives on the Vulkan device (lavapipe, the CPU driver, when there is no GPU;
# NX_VULKAN_DEVICE picks another one). Ops without a native kernel yet run on the host and
# are counted: the counts are printed at the end.

Application.put_env(:nx_vulkan, :host_fallback, :allow)
Nx.global_default_backend(Nx.Vulkan.Backend)

if Code.ensure_loaded?(Nx.Vulkan.Compiler) do
  Nx.Defn.global_default_options(compiler: Nx.Vulkan.Compiler)
end

defmodule MLP do
  import Nx.Defn

  defn predict({w1, b1, w2, b2}, x) do
    x
    |> Nx.dot(w1)
    |> Nx.add(b1)
    |> Nx.tanh()
    |> Nx.dot(w2)
    |> Nx.add(b2)
  end

  defn loss(params, x, y) do
    diff = predict(params, x) - y
    Nx.mean(diff * diff)
  end

  # One step of gradient descent; returns the new parameters and the loss before the step.
  defn step({w1, b1, w2, b2} = params, x, y, opts \\ []) do
    opts = keyword!(opts, learning_rate: 0.05)
    lr = opts[:learning_rate]
    {loss, {g1, gb1, g2, gb2}} = value_and_grad(params, &loss(&1, x, y))
    {{w1 - lr * g1, b1 - lr * gb1, w2 - lr * g2, b2 - lr * gb2}, loss}
  end

  def init(key, hidden) do
    {w1, key} = Nx.Random.normal(key, 0.0, 1.0, shape: {1, hidden}, type: :f32)

    {w2, _key} =
      Nx.Random.normal(key, 0.0, 1.0 / :math.sqrt(hidden), shape: {hidden, 1}, type: :f32)

    {w1, Nx.broadcast(0.0, {hidden}), w2, Nx.broadcast(0.0, {1})}
  end
end

device = Nx.Vulkan.device_info()
IO.puts("Device #{device.index}: #{device.name} (#{device.type}, #{device.driver_name})")

key = Nx.Random.key(42)
{x, key} = Nx.Random.uniform(key, -3.0, 3.0, shape: {512, 1}, type: :f32)
y = Nx.sin(x)
params = MLP.init(key, 32)

batch_size = 64
epochs = 30
batches = Nx.axis_size(x, 0) |> div(batch_size)

Enum.reduce(1..epochs, params, fn epoch, params ->
  {params, total} =
    Enum.reduce(0..(batches - 1), {params, 0.0}, fn b, {params, total} ->
      xb = Nx.slice_along_axis(x, b * batch_size, batch_size)
      yb = Nx.slice_along_axis(y, b * batch_size, batch_size)
      # The old parameters are given up to the step: with Nx.Vulkan.Compiler it writes the new
      # ones over them (buffer donation) instead of allocating.
      {params, loss} = MLP.step(Nx.donatable(params), xb, yb, learning_rate: 0.05)
      {params, total + Nx.to_number(loss)}
    end)

  IO.puts(
    "epoch #{String.pad_leading(Integer.to_string(epoch), 2)}  loss #{Float.round(total / batches, 5)}"
  )

  params
end)

IO.puts("host fallbacks per op: #{inspect(Nx.Vulkan.fallback_counts())}")
