defmodule NxVulkan.Fixtures.Reference do
  @moduledoc false
  # Expected values for the ops whose Nx.BinaryBackend formula loses precision (see
  # Mix.Tasks.NxVulkan.Fixtures, "Reference values"): the same function, evaluated so that it
  # stays within a few ulps of the exact result, rounded to the output type as Nx writes it.
  # Elements where Nx.BinaryBackend's value is not finite (or where its input is not) keep it.
  #
  #   * expm1 = exp(x) - 1 and log1p = log(1 + x) cancel for small |x| (expm1(3e-6) loses
  #     17 bits; expm1 of the smallest normal gives 0): Kahan's corrections.
  #   * cbrt = x ** (1/3) rounds 1/3 first: one Newton step on y^3 = x (for complex z, on |z|).
  #   * erf_inv uses a single-precision polynomial (Giles) even for f64: Newton steps on
  #     :math.erf / :math.erfc.

  @refined ~w(expm1 log1p cbrt erf_inv)

  def refined_ops, do: @refined

  def refine(op, [input], %Nx.Tensor{} = result) when op in @refined do
    xs = to_list(input)
    ys = to_list(result)

    values =
      Enum.zip_with(xs, ys, fn
        x, y when is_number(x) and is_float(y) ->
          safe(op, x * 1.0, y)

        %Complex{re: re, im: im}, %Complex{} = y when is_number(re) and is_number(im) ->
          complex(op, re, im, y)

        _, y ->
          y
      end)

    Nx.tensor(values, type: result.type, backend: Nx.BinaryBackend) |> Nx.reshape(result.shape)
  end

  def refine(_op, _inputs, result), do: result

  # cbrt of a complex number: Complex's formula, |z|^(1/3) at phase(z) / 3, with the accurate
  # real cube root.
  defp complex("cbrt", re, im, fallback) do
    r = value("cbrt", Complex.abs(Complex.new(re, im)) * 1.0, nil)
    t = :math.atan2(im, re) / 3
    Complex.new(r * :math.cos(t), r * :math.sin(t))
  rescue
    ArithmeticError -> fallback
  end

  defp complex(_op, _re, _im, fallback), do: fallback

  defp to_list(t), do: t |> Nx.backend_transfer(Nx.BinaryBackend) |> Nx.to_flat_list()

  defp safe(op, x, fallback) do
    value(op, x, fallback)
  rescue
    ArithmeticError -> fallback
  end

  defp value("expm1", x, fallback) do
    u = :math.exp(x)

    cond do
      abs(x) >= 1.0 -> fallback
      u == 1.0 -> x
      u - 1.0 == -1.0 -> -1.0
      true -> (u - 1.0) * x / :math.log(u)
    end
  end

  defp value("log1p", x, fallback) do
    u = 1.0 + x

    cond do
      abs(x) >= 1.0 -> fallback
      u == 1.0 -> x
      true -> :math.log(u) * x / (u - 1.0)
    end
  end

  defp value("cbrt", x, _fallback) do
    ax = abs(x)

    y =
      cond do
        ax == 0.0 -> ax
        # Scale by 2^(+-300) (cube-exact) so that y^3 neither under- nor overflows.
        ax < 1.0e-280 -> cbrt_newton(ax * :math.pow(2.0, 300)) * :math.pow(2.0, -100)
        ax > 1.0e280 -> cbrt_newton(ax * :math.pow(2.0, -300)) * :math.pow(2.0, 100)
        true -> cbrt_newton(ax)
      end

    if x < 0, do: -y, else: y
  end

  defp value("erf_inv", x, fallback) do
    ax = abs(x)

    if ax >= 1.0 or x == 0.0 do
      fallback
    else
      t = Enum.reduce(1..4, abs(fallback), fn _, t -> erf_inv_step(ax, t) end)
      if x < 0, do: -t, else: t
    end
  end

  defp cbrt_newton(a) do
    y = :math.pow(a, 1 / 3)
    y - (y * y * y - a) / (3 * y * y)
  end

  # Newton on erf(t) = a; near a = 1 the residual through erfc keeps its precision.
  defp erf_inv_step(a, t) do
    residual = if a > 0.5, do: 1.0 - a - :math.erfc(t), else: :math.erf(t) - a
    t - residual / (1.1283791670955126 * :math.exp(-t * t))
  end
end
