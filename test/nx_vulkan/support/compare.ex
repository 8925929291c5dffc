defmodule Nx.Vulkan.Test.Compare do
  @moduledoc false
  # Comparisons of raw tensor bytes: bit-exact (any NaN matches any NaN, the sign of zero
  # must match) or within a number of ulps for floats.
  import Bitwise

  @doc "Random bytes for `n` elements of `type`, with the special values mixed in."
  def random_binary({kind, bits} = type, n, opts \\ []) do
    specials? = Keyword.get(opts, :specials, true)

    for i <- 0..(n - 1)//1, into: <<>> do
      if specials? and kind in [:f, :bf] and rem(i, 5) == 0 do
        special(type, div(i, 5))
      else
        random_element(type, bits)
      end
    end
  end

  defp random_element({:f, 64}, _), do: <<:rand.normal() * 10::float-64-native>>
  defp random_element({:f, 32}, _), do: <<:rand.normal() * 10::float-32-native>>

  defp random_element({:f, 16}, _) do
    <<:rand.normal() * 10::float-16-native>>
  end

  defp random_element({:bf, 16}, _) do
    <<bits::32>> = <<:rand.normal() * 10::float-32>>
    <<bits >>> 16::16-native>>
  end

  defp random_element({:s, bits}, _) do
    <<:rand.uniform(1 <<< bits) - 1 - (1 <<< (bits - 1))::signed-size(bits)-native>>
  end

  defp random_element({:u, bits}, _), do: <<:rand.uniform(1 <<< bits) - 1::size(bits)-native>>

  # -0.0, +Inf, -Inf, a quiet NaN, and a NaN with a payload.
  def special({:f, 32}, i) do
    Enum.at(
      [<<0x80000000::32-native>>, <<0x7F800000::32-native>>, <<0xFF800000::32-native>>] ++
        [<<0x7FC00000::32-native>>, <<0x7FC12345::32-native>>],
      rem(i, 5)
    )
  end

  def special({:f, 64}, i) do
    Enum.at(
      [<<0x8000000000000000::64-native>>, <<0x7FF0000000000000::64-native>>] ++
        [<<0xFFF0000000000000::64-native>>, <<0x7FF8000000000000::64-native>>] ++
        [<<0x7FF8000000012345::64-native>>],
      rem(i, 5)
    )
  end

  def special({:f, 16}, i) do
    Enum.at(
      [<<0x8000::16-native>>, <<0x7C00::16-native>>, <<0xFC00::16-native>>] ++
        [<<0x7E00::16-native>>, <<0x7E15::16-native>>],
      rem(i, 5)
    )
  end

  def special({:bf, 16}, i) do
    Enum.at(
      [<<0x8000::16-native>>, <<0x7F80::16-native>>, <<0xFF80::16-native>>] ++
        [<<0x7FC0::16-native>>, <<0x7FC5::16-native>>],
      rem(i, 5)
    )
  end

  @doc """
  Compares two binaries of `type` element by element. Returns `:ok` or
  `{:mismatch, index, expected_bits, actual_bits}` for the first difference.
  """
  def compare(type, expected, actual, ulps \\ 0)

  def compare({kind, bits} = type, expected, actual, ulps) do
    size = div(bits, 8)

    if byte_size(expected) != byte_size(actual) do
      {:size_mismatch, byte_size(expected), byte_size(actual)}
    else
      n = div(byte_size(expected), size)

      Enum.reduce_while(0..(n - 1)//1, :ok, fn i, :ok ->
        <<e::size(bits)-native>> = binary_part(expected, i * size, size)
        <<a::size(bits)-native>> = binary_part(actual, i * size, size)

        if same?(kind, type, e, a, ulps),
          do: {:cont, :ok},
          else: {:halt, {:mismatch, i, e, a}}
      end)
    end
  end

  defp same?(_kind, _type, x, x, _ulps), do: true
  defp same?(kind, _type, _e, _a, _ulps) when kind in [:s, :u], do: false

  defp same?(:c, {:c, bits}, e, a, ulps) do
    half = div(bits, 2)
    mask = (1 <<< half) - 1

    same?(:f, {:f, half}, e &&& mask, a &&& mask, ulps) and
      same?(:f, {:f, half}, e >>> half, a >>> half, ulps)
  end

  defp same?(_kind, type, e, a, ulps) do
    cond do
      nan?(type, e) and nan?(type, a) -> true
      nan?(type, e) or nan?(type, a) -> false
      ulps == 0 -> false
      sign(type, e) != sign(type, a) -> magnitude(type, e) + magnitude(type, a) <= ulps
      true -> abs(magnitude(type, e) - magnitude(type, a)) <= ulps
    end
  end

  defp layout({:f, 64}), do: {52, 11}
  defp layout({:f, 32}), do: {23, 8}
  defp layout({:f, 16}), do: {10, 5}
  defp layout({:bf, 16}), do: {7, 8}
  defp layout({:f, 8}), do: {2, 5}
  defp layout({:f8_e4m3fn, 8}), do: {3, 4}

  @doc "Whether the bits `x` of a float `type` are finite."
  def finite?(type, x) do
    {m, e} = layout(type)

    (not nan?(type, x) and (x >>> m &&& (1 <<< e) - 1) != (1 <<< e) - 1) or
      type == {:f8_e4m3fn, 8}
  end

  # E4M3FN has no infinities: only the all-ones magnitude is NaN.
  def nan?({:f8_e4m3fn, 8}, x), do: (x &&& 0x7F) == 0x7F

  def nan?(type, x) do
    {m, e} = layout(type)
    exp = x >>> m &&& (1 <<< e) - 1
    frac = x &&& (1 <<< m) - 1
    exp == (1 <<< e) - 1 and frac != 0
  end

  defp sign(type, x) do
    {m, e} = layout(type)
    x >>> (m + e)
  end

  defp magnitude(type, x) do
    {m, e} = layout(type)
    x &&& (1 <<< (m + e)) - 1
  end
end
