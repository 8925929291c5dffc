defmodule NxVulkan.Fixtures.Tolerance do
  @moduledoc false
  # The `tolerance_ulp` of a fixture case (rules in Mix.Tasks.NxVulkan.Fixtures, "Tolerances"):
  # ulps of the output type by op, output type and input types.

  @transcendental ~w(exp expm1 log log1p sigmoid cos sin tan cosh sinh tanh acos asin atan) ++
                    ~w(acosh asinh atanh rsqrt cbrt pow atan2 phase)
  @accumulating ~w(sum product cumulative_sum cumulative_product window_sum window_product) ++
                  ~w(dot conv all_close window_scatter_max window_scatter_min)
  @fft ~w(fft ifft fft2 ifft2 rfft irfft)
  @linalg ~w(triangular_solve linalg_cholesky linalg_solve linalg_determinant)
  # Ops whose result is one of the input values (or exactly representable): no bf16 bump.
  @value_preserving ~w(negate abs sign ceil floor round real imag conjugate min max select) ++
                      ~w(clip reduce_max reduce_min window_max window_min cumulative_min) ++
                      ~w(cumulative_max reshape transpose broadcast squeeze pad slice put_slice) ++
                      ~w(concatenate stack reverse gather take take_along_axis indexed_put) ++
                      ~w(sort argsort top_k argmax argmin bitcast eye is_nan is_infinity) ++
                      ~w(equal not_equal greater less greater_equal less_equal logical_not)

  # Arithmetic whose integer inputs may not be exact in the float output type: Nx computes in
  # f64 from the exact integers, a device converts them to the output type first (as EXLA does).
  @arith ~w(add subtract multiply divide pow atan2 remainder)

  def tolerance(op, out_type, in_types) do
    base = base_tolerance(op, out_type, in_types)

    base =
      if op in @arith and Enum.any?(in_types, &lossy?(&1, out_type)), do: max(base, 2), else: base

    cond do
      out_type == {:bf, 16} and op == "as_type" and in_types == [{:bf, 16}] -> 0
      out_type == {:bf, 16} and op not in @value_preserving -> max(base, 1)
      true -> base
    end
  end

  def lossy?({k, bits}, {fk, fbits}) when k in [:u, :s] and fk in [:f, :bf, :c, :f8_e4m3fn] do
    mantissa =
      case {fk, fbits} do
        {:bf, 16} -> 8
        {:f, 16} -> 11
        {:f, 8} -> 3
        {:f8_e4m3fn, 8} -> 4
        {:f, 32} -> 24
        {:c, 64} -> 24
        _ -> 53
      end

    if(k == :s, do: bits - 1, else: bits) > mantissa
  end

  def lossy?(_, _), do: false

  # Types whose ulp is coarse enough that a few f32 ulps of error stay within one of theirs.
  def narrow?(type), do: type in [{:f, 16}, {:f, 8}, {:f8_e4m3fn, 8}]

  def base_tolerance(op, type, in_types) do
    {kind, _} = type
    complex_in? = Enum.any?(in_types, &match?({:c, _}, &1))

    cond do
      kind in [:u, :s] -> 0
      op in @fft -> 64
      op in @linalg -> 256
      op in ["erf", "erfc"] -> if narrow?(type), do: 1, else: 8
      op == "erf_inv" -> if narrow?(type), do: 2, else: 32
      # exp(y log x): an ulp of |y log x| (up to a few hundred here) moves cos/sin of it by
      # hundreds of ulps of the result, in Nx.BinaryBackend's value as in ours.
      complex_in? and op == "pow" -> if type == {:c, 128}, do: 1024, else: 4
      op in @transcendental -> if narrow?(type), do: 1, else: 4
      # Nx's cumulative ops (associative_scan) round every step in the tensor's type, bf16 by
      # truncation; the engine accumulates f16/bf16 in f32 and rounds once: one ulp per step
      # of the (at most 6-long) narrow fixtures' axes.
      op in ["cumulative_sum", "cumulative_product"] and (narrow?(type) or type == {:bf, 16}) -> 8
      op in @accumulating -> if narrow?(type) or type == {:bf, 16}, do: 2, else: 16
      complex_in? and op == "multiply" -> 2
      complex_in? and op in ["divide", "sqrt", "abs"] -> 4
      true -> 0
    end
  end
end
