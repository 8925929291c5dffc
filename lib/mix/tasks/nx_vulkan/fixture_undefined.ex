defmodule NxVulkan.Fixtures.Undefined do
  @moduledoc false
  # The elementwise computations of the fixtures, raising on inputs where Nx.BinaryBackend's
  # result is not IEEE 754 / C99's: `repair/2` (NxVulkan.Fixtures) replaces those elements and
  # `capture/2` drops raising computations, as for inputs on which Nx.BinaryBackend itself
  # raises. The fixtures' README lists the rules.

  # Nx.BinaryBackend (through Complex) gives +0.0 for x / +-Inf and +Inf for Inf / -0.0,
  # where IEEE 754 (and EXLA) give signed results: such divisions count as undefined (raise),
  # so the generator leaves them out.
  def binary_fun(:divide) do
    fn a, b ->
      if float?(b) and any?(Nx.is_infinity(b)),
        do: raise(ArgumentError, "division by infinity")

      if float?(b) and float?(a) and
           any?(Nx.logical_and(Nx.is_infinity(a), Nx.equal(b, 0))),
         do: raise(ArgumentError, "infinity divided by zero")

      if (complex?(a) or complex?(b)) and (non_finite?(a) or non_finite?(b)),
        do: raise(ArgumentError, "complex division with non-finite components")

      Nx.divide(a, b)
    end
  end

  # C99 gives atan2(-y, -Inf) = -pi, pow(1, NaN) = 1, pow(0.5, -Inf) = +Inf: Nx.BinaryBackend
  # (Complex) does not, so these inputs count as undefined too.
  def binary_fun(:atan2) do
    fn a, b ->
      if float?(b) and any?(Nx.equal(b, Nx.Constants.neg_infinity())),
        do: raise(ArgumentError, "atan2 with x = -Inf")

      Nx.atan2(a, b)
    end
  end

  def binary_fun(:pow) do
    fn a, b ->
      if float?(b) and non_finite?(b),
        do: raise(ArgumentError, "pow with a non-finite exponent")

      if float?(a) and any?(Nx.is_nan(a)),
        do: raise(ArgumentError, "pow with a NaN base")

      if (complex?(a) or complex?(b)) and (non_finite?(a) or non_finite?(b)),
        do: raise(ArgumentError, "complex pow with non-finite components")

      Nx.pow(a, b)
    end
  end

  def binary_fun(op), do: fn a, b -> apply(Nx, op, [a, b]) end

  # Nx.BinaryBackend gives tanh(+-Inf) = NaN (C99: +-1), and complex math on infinite or NaN
  # components follows Complex's own rules, not C99's Annex G: those inputs count as undefined.
  @complex_math [:exp, :expm1, :log, :log1p, :sigmoid, :cos, :sin, :tan, :cosh, :sinh, :tanh] ++
                  [:acos, :asin, :atan, :acosh, :asinh, :atanh, :sqrt, :rsqrt, :cbrt]

  def unary_fun(op) do
    fn t ->
      if op == :tanh and float?(t) and non_finite?(t),
        do: raise(ArgumentError, "tanh of an infinity")

      # sign(complex): Nx.BinaryBackend compares the Complex struct with 0 as an Erlang term
      # (always greater, so every result is 1); EXLA and the engine give z / |z|.
      if op == :sign and complex?(t), do: raise(ArgumentError, "sign of a complex number")

      if op in @complex_math and complex?(t) and non_finite?(t),
        do: raise(ArgumentError, "complex #{op} of a non-finite number")

      apply(Nx, op, [t])
    end
  end

  # all/any of complex numbers: Nx.BinaryBackend compares each Complex struct with 0 as an
  # Erlang term (never equal), so 0+0i counts as true; EXLA and the engine give false.
  def reduce_fun(op) when op in [:all, :any] do
    fn t, opts ->
      if complex?(t) and any?(Nx.equal(t, 0)),
        do: raise(ArgumentError, "#{op} of a complex zero")

      apply(Nx, op, [t, opts])
    end
  end

  def reduce_fun(op), do: fn t, opts -> apply(Nx, op, [t, opts]) end

  # window_scatter_max/min of f64: Nx.BinaryBackend adds the selected source values with
  # Nx.add on plain numbers, which gives f32 tensors, so its f64 results keep f32 precision.
  def window_scatter_fun(op) do
    fn t, source, init, window, opts ->
      if Nx.type(source) == {:f, 64},
        do: raise(ArgumentError, "#{op} of f64 (summed in f32 by Nx.BinaryBackend)")

      apply(Nx, op, [t, source, init, window, opts])
    end
  end

  defp complex?(t), do: elem(Nx.type(t), 0) == :c

  defp non_finite?(t),
    do: any?(Nx.logical_or(Nx.is_nan(t), Nx.is_infinity(t)))

  # Does any element of the u8 tensor `t` hold?
  defp any?(t), do: Nx.to_number(Nx.any(t)) == 1

  defp float?(t), do: elem(Nx.type(t), 0) in [:f, :bf]
end
