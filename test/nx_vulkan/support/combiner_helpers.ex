defmodule Nx.Vulkan.Test.CombinerHelpers do
  @moduledoc false
  # What the tests of reduce/5 and window_reduce/6 with Elixir functions (traced into the
  # kernel's combiner, Nx.Vulkan.Combiner) share: small random inputs on Nx.BinaryBackend, and
  # results compared exactly or within a relative tolerance.

  import ExUnit.Assertions

  @doc "Small values: floats in [-2, 2), u in [1, 60], s in [-30, 30]; on Nx.BinaryBackend."
  def random(type, shape) do
    n = Tuple.product(shape)

    values =
      case type do
        {:f, _} -> for _ <- 1..max(n, 1), do: :rand.uniform() * 4 - 2
        {:u, _} -> for _ <- 1..max(n, 1), do: :rand.uniform(60)
        {:s, _} -> for _ <- 1..max(n, 1), do: :rand.uniform(61) - 31
      end

    values
    |> Enum.take(n)
    |> Nx.tensor(type: type, backend: Nx.BinaryBackend)
    |> Nx.reshape(shape)
  end

  def on_device(t), do: Nx.backend_copy(t, Nx.Vulkan.Backend)

  @doc "Nx.BinaryBackend's result: numbers inside the function become host tensors too."
  def on_host(fun), do: Nx.with_default_backend(Nx.BinaryBackend, fun)

  @doc "Same type and shape; the same bits, or within `tolerance` relative (at least 1.0)."
  def assert_same(expected, actual, tolerance \\ nil) do
    assert actual.type == expected.type
    assert actual.shape == expected.shape

    if tolerance do
      e = Nx.to_flat_list(expected)
      a = Nx.to_flat_list(Nx.backend_transfer(actual, Nx.BinaryBackend))

      Enum.zip(e, a)
      |> Enum.each(fn {x, y} ->
        assert abs(x - y) <= tolerance * max(1.0, abs(x)), "#{inspect(x)} vs #{inspect(y)}"
      end)
    else
      assert Nx.to_binary(actual) == Nx.to_binary(expected)
    end
  end
end
