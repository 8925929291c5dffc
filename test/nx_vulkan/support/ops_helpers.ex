defmodule Nx.Vulkan.Test.OpsHelpers do
  @moduledoc false
  # What the op-family tests (test/nx_vulkan/ops) and the backend-level tests share: tensors
  # on either backend, random inputs, and Nx.Vulkan.Backend against Nx.BinaryBackend with the
  # host fallback refused (a fallback would compare Nx.BinaryBackend with itself).

  import ExUnit.Assertions
  import Bitwise
  alias Nx.Vulkan.Test.Compare

  ## Tensors

  def vk(binary, type, shape) do
    Nx.from_binary(binary, type, backend: Nx.Vulkan.Backend) |> Nx.reshape(shape)
  end

  def host(binary, type, shape) do
    Nx.from_binary(binary, type, backend: Nx.BinaryBackend) |> Nx.reshape(shape)
  end

  def bytes(tensor), do: Nx.to_binary(tensor)

  def to_host(t), do: Nx.backend_copy(t, Nx.BinaryBackend)
  def to_vk(t), do: Nx.backend_copy(t, Nx.Vulkan.Backend)

  @doc "Runs `fun` with the host fallback refused: an op that would fall back raises."
  def native(fun), do: Nx.Vulkan.with_host_fallback(:raise, fun)

  @doc "Runs `fun` on Nx.BinaryBackend (numbers and integer starts become host tensors)."
  def ref(fun), do: Nx.with_default_backend(Nx.BinaryBackend, fun)

  ## Random inputs

  @doc """
  A device tensor of random values: floats in (-max, max) (max 100 by default), integers over
  the type's range (or [0, max)); `positive: true`, `nonzero: true` as named.
  """
  def random(type, shape, opts \\ []) do
    n = Tuple.product(shape)
    host = random_host(type, n, opts)
    Nx.backend_transfer(Nx.reshape(host, shape), Nx.Vulkan.Backend)
  end

  defp random_host({kind, _} = type, n, opts) do
    max = Keyword.get(opts, :max, if(kind in [:f, :bf], do: 100, else: nil))

    values =
      for _ <- 1..max(n, 1)//1 do
        case kind do
          k when k in [:f, :bf] ->
            v =
              if opts[:positive] == true,
                do: :rand.uniform() * max + 0.01,
                else: (:rand.uniform() - 0.5) * 2 * max

            if opts[:nonzero] == true and abs(v) < 0.01, do: 1.0, else: v

          :u ->
            {_, bits} = type
            top = if max, do: min(max, 1 <<< bits), else: 1 <<< bits
            v = :rand.uniform(top) - 1
            if opts[:nonzero] == true and v == 0, do: 1, else: v

          :s ->
            {_, bits} = type
            top = if max, do: min(max, 1 <<< (bits - 1)), else: 1 <<< (bits - 1)
            v = :rand.uniform(2 * top) - 1 - top
            v = if opts[:positive] == true, do: abs(v), else: v
            if opts[:nonzero] == true and v == 0, do: 1, else: v
        end
      end

    values = Enum.take(values, n)
    Nx.tensor(values, type: type, backend: Nx.BinaryBackend) |> Nx.reshape({n})
  end

  @doc """
  The same random bytes as `{device tensor, Nx.BinaryBackend tensor}`: any bit pattern for
  integers and 8-bit floats, NaN, Inf and -0.0 mixed in for wider floats.
  """
  def random_pair({kind, bits} = type, shape) do
    n = Tuple.product(shape)

    data =
      if kind in [:f, :bf] and bits > 8,
        do: Compare.random_binary(type, n),
        else: :rand.bytes(div(n * bits, 8))

    {vk(data, type, shape), host(data, type, shape)}
  end

  ## Comparisons

  @doc """
  `Nx.op(inputs...)` on the device (host fallback refused) against the same op on copies of
  the inputs on Nx.BinaryBackend: same type and shape, bits within `ulps`.
  """
  def check(op, inputs, ulps) do
    actual = native(fn -> apply(Nx, op, inputs) end)
    expected = apply(Nx, op, Enum.map(inputs, &to_host/1))
    assert actual.type == expected.type
    assert actual.shape == expected.shape

    result = Compare.compare(expected.type, bytes(expected), bytes(actual), ulps)

    assert :ok == result,
           "#{op} on #{Enum.map_join(inputs, ", ", &inspect(&1.type))}: #{inspect(result)} " <>
             "inputs #{inspect(Enum.map(inputs, &Nx.to_flat_list/1), limit: 8)}"
  end

  @doc """
  `op` (negate, exp or a binary op) on inputs with special values, on the device (host
  fallback refused); the reference is computed element by element on Nx.BinaryBackend,
  skipping the elements where it raises (it cannot do 1.0/0.0 and a few other IEEE cases).
  """
  def check_specials(op, {_, bits} = type) do
    size = div(bits, 8)
    n = 25
    specials = for i <- 0..4, into: <<>>, do: Compare.special(type, i)
    finite = Compare.random_binary(type, n - 5, specials: false)
    a = specials <> finite
    b = Compare.random_binary(type, 20, specials: false) <> specials
    arity = if op in [:negate, :exp], do: 1, else: 2

    # Every pair of specials, too.
    {a, b} =
      if arity == 2 do
        pairs = for i <- 0..4, j <- 0..4, do: {Compare.special(type, i), Compare.special(type, j)}
        {a <> Enum.map_join(pairs, &elem(&1, 0)), b <> Enum.map_join(pairs, &elem(&1, 1))}
      else
        {a, b}
      end

    count = div(byte_size(a), size)
    inputs = if arity == 2, do: [a, b], else: [a]

    actual =
      native(fn -> apply(Nx, op, Enum.map(inputs, &vk(&1, type, {count}))) end) |> bytes()

    out_size = div(byte_size(actual), count)

    for i <- 0..(count - 1) do
      args = Enum.map(inputs, &host(binary_part(&1, i * size, size), type, {}))

      case safe(fn -> apply(Nx, op, args) end) do
        {:ok, expected} ->
          got = binary_part(actual, i * out_size, out_size)

          result =
            Compare.compare(expected.type, bytes(expected), got, if(op == :exp, do: 4, else: 0))

          assert :ok == result,
                 "#{op} #{inspect(type)} element #{i}: inputs #{inspect(Enum.map(args, &bytes/1))}" <>
                   " expected #{inspect(bytes(expected))} got #{inspect(got)}"

        :error ->
          :skip
      end
    end
  end

  defp safe(fun) do
    {:ok, fun.()}
  rescue
    _ -> :error
  end
end
