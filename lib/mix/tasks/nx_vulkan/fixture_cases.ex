defmodule NxVulkan.Fixtures.Cases do
  @moduledoc false
  # The cases of each fixture family (see Mix.Tasks.NxVulkan.Fixtures for the format); the
  # machinery that records and writes them is NxVulkan.Fixtures.
  import NxVulkan.Fixtures
  alias NxVulkan.Fixtures.Undefined

  @ints [{:u, 8}, {:u, 16}, {:u, 32}, {:u, 64}, {:s, 8}, {:s, 16}, {:s, 32}, {:s, 64}]
  @floats [{:f, 16}, {:bf, 16}, {:f, 32}, {:f, 64}]
  @complex [{:c, 64}, {:c, 128}]
  # The 8-bit floats come last in each family, so that the cases before them (and the random
  # draws they take) stay as they were.
  @f8 [{:f, 8}, {:f8_e4m3fn, 8}]
  @all @ints ++ @floats ++ @complex
  @real @ints ++ @floats

  @unary_math [:exp, :expm1, :log, :log1p, :sigmoid, :cos, :sin, :tan, :cosh, :sinh, :tanh] ++
                [:acos, :asin, :atan, :acosh, :asinh, :atanh, :sqrt, :rsqrt, :cbrt] ++
                [:erf, :erfc, :erf_inv]
  @unary_other [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
                 [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]
  @binary [:add, :subtract, :multiply, :pow, :remainder, :divide, :atan2, :min, :max] ++
            [:quotient, :bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift] ++
            [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
            [:logical_and, :logical_or, :logical_xor]

  @doc "The type lists the fixture families draw from."
  def types, do: %{ints: @ints, floats: @floats, complex: @complex, f8: @f8}

  def family_cases("elementwise_unary") do
    ops = @unary_math ++ @unary_other

    for op <- ops do
      fun = Undefined.unary_fun(op)

      main =
        for type <- @all do
          t = tensor(type, {4, 8}, :special)
          [t] = repair(fun, [t])
          capture([to_string(op)], fn -> fun.(t) end)
        end

      extra =
        for {type, shape, kind} <- [
              {{:f, 32}, {}, :unit},
              {{:s, 32}, {}, :positive},
              {{:f, 32}, {257}, :unit},
              {{:f, 16}, {1, 3, 1}, :positive},
              {{:u, 8}, {257}, :general},
              {{:f, 32}, {3, 5}, :positive},
              {{:f, 64}, {3, 5}, :unit}
            ] do
          t = tensor(type, shape, kind)
          [t] = if Nx.size(t) > 0, do: repair(fun, [t]), else: [t]
          capture([to_string(op)], fn -> fun.(t) end)
        end

      [main, extra]
    end ++
      for type <- @all, op <- [:logical_not, :phase] do
        t = tensor(type, {3, 4}, :special)
        capture([to_string(op)], fn -> apply(Nx, op, [t]) end)
      end ++
      for op <- ops ++ [:logical_not], type <- @f8 do
        fun = Undefined.unary_fun(op)
        t = tensor(type, {4, 8}, :special)
        [t] = repair(fun, [t])
        capture([to_string(op)], fn -> fun.(t) end)
      end
  end

  def family_cases("elementwise_binary") do
    mixed = [
      {{:u, 8}, {:s, 8}},
      {{:s, 32}, {:f, 32}},
      {{:u, 8}, {:f, 16}},
      {{:s, 64}, {:f, 64}},
      {{:f, 16}, {:f, 32}},
      {{:bf, 16}, {:f, 16}},
      {{:f, 32}, {:c, 64}},
      {{:u, 32}, {:s, 32}},
      {{:u, 64}, {:s, 64}},
      {{:s, 16}, {:u, 16}}
    ]

    shape_pairs = [{{3}, {2, 3}}, {{}, {2, 3}}, {{2, 1}, {1, 3}}, {{4, 1, 2}, {3, 1}}]

    for op <- @binary do
      fun = Undefined.binary_fun(op)
      keep = [to_string(op)]

      same =
        for type <- @all do
          a = tensor(type, {4, 8}, :special)
          b = tensor(type, {4, 8}, :general)
          b2 = Nx.reverse(a)
          [a, b] = repair(fun, [a, b])
          [a2, b2] = repair(fun, [a, b2])
          [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(a2, b2) end)]
        end

      cross =
        for type <- [{:f, 32}, {:f, 64}, {:f, 16}, {:s, 32}, {:u, 8}] do
          s = specials_or_ints(type)
          col = from_list(s, type, {length(s), 1})
          row = from_list(s, type, {length(s)})
          cross_case(fun, keep, col, row)
        end

      mix =
        for {{ta, tb}, i} <- Enum.with_index(mixed) do
          {sa, sb} = Enum.at(shape_pairs, rem(i, length(shape_pairs)))
          a = tensor(ta, sa, :plain)
          b = tensor(tb, sb, :plain)

          fallback = fn ->
            a = tensor(ta, sa, :positive)
            b = tensor(tb, sb, :positive)
            [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(b, a) end)]
          end

          if runs?(fn -> {fun.(a, b), fun.(b, a)} end),
            do: [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(b, a) end)],
            else: fallback.()
        end

      edge =
        for {ta, sa, sb, kind} <- [
              {{:f, 32}, {257}, {257}, :positive},
              {{:s, 32}, {257}, {257}, :positive},
              {{:f, 32}, {}, {}, :positive},
              {{:u, 8}, {1, 5, 1}, {1, 5, 1}, :positive}
            ] do
          a = tensor(ta, sa, kind)
          b = tensor(ta, sb, kind)
          capture(keep, fn -> fun.(a, b) end)
        end

      numbers =
        for type <- [{:s, 8}, {:u, 8}, {:f, 32}, {:bf, 16}, {:s, 64}], n <- [2, 0.5] do
          a = tensor(type, {5}, :positive)
          capture(keep, fn -> fun.(a, n) end)
        end

      [same, cross, mix, edge, numbers]
    end ++
      for op <- @binary do
        fun = Undefined.binary_fun(op)
        keep = [to_string(op)]

        same =
          for type <- @f8 do
            [a, b] = repair(fun, [tensor(type, {4, 8}, :special), tensor(type, {4, 8}, :general)])
            capture(keep, fn -> fun.(a, b) end)
          end

        mix =
          for {ta, tb} <- [{{:f, 8}, {:f, 32}}, {{:f8_e4m3fn, 8}, {:f, 16}}, {{:f, 8}, {:s, 8}}] do
            a = tensor(ta, {2, 3}, :positive)
            b = tensor(tb, {3}, :positive)
            [capture(keep, fn -> fun.(a, b) end), capture(keep, fn -> fun.(b, a) end)]
          end

        [same, mix]
      end
  end

  def family_cases("select_clip") do
    select =
      for type <- @all do
        pred = tensor({:u, 8}, {4, 8}, :bool)
        a = tensor(type, {4, 8}, :special)
        b = tensor(type, {4, 8}, :general)
        capture(["select"], fn -> Nx.select(pred, a, b) end)
      end ++
        for {pt, ps, at, as, bt, bs} <- [
              {{:u, 8}, {}, {:f, 32}, {3, 2}, {:f, 32}, {3, 2}},
              {{:u, 8}, {3, 1}, {:s, 32}, {2}, {:f, 32}, {}},
              {{:f, 32}, {2, 3}, {:u, 8}, {2, 3}, {:s, 8}, {3}},
              {{:s, 32}, {257}, {:f, 64}, {257}, {:f, 64}, {}},
              {{:bf, 16}, {4}, {:c, 64}, {4}, {:f, 16}, {4}}
            ] do
          pred =
            if pt == {:f, 32},
              do: from_list([0.0, neg_zero(), :nan, 1.0, 0.0, -2.0], pt, ps),
              else: tensor(pt, ps, :bool)

          a = tensor(at, as, :general)
          b = tensor(bt, bs, :general)
          capture(["select"], fn -> Nx.select(pred, a, b) end)
        end

    clip =
      for type <- @real do
        t = tensor(type, {4, 8}, :special)
        {lo, hi} = if type in @ints, do: {1, 50}, else: {-1.5, 2.5}
        lo = from_list([lo], type, {})
        hi = from_list([hi], type, {})
        capture(["clip"], fn -> Nx.clip(t, lo, hi) end)
      end ++
        for {type, shape, lo, hi, lt} <- [
              {{:f, 32}, {257}, -0.5, 0.5, {:f, 32}},
              {{:s, 32}, {}, -3, 3, {:s, 32}},
              {{:u, 8}, {3, 5}, 10, 200, {:u, 8}},
              {{:f, 32}, {2, 3}, 0.0, :nan, {:f, 32}},
              {{:s, 8}, {2, 3}, -1.0, 1.0, {:f, 32}}
            ] do
          t = tensor(type, shape, :general)
          lo = from_list([lo], lt, {})
          hi = from_list([hi], lt, {})
          capture(["clip"], fn -> Nx.clip(t, lo, hi) end)
        end

    [select, clip]
  end

  def family_cases("as_type") do
    as_type =
      for from <- @all, to <- @all do
        t = tensor(from, {4, 8}, :special)
        [t] = repair(fn t -> Nx.as_type(t, to) end, [t])
        capture(["as_type"], fn -> Nx.as_type(t, to) end)
      end ++
        for {from, to, shape} <- [
              {{:f, 32}, {:s, 32}, {257}},
              {{:f, 64}, {:f, 16}, {257}},
              {{:f, 32}, {:bf, 16}, {257}},
              {{:s, 64}, {:f, 32}, {}}
            ] do
          t = tensor(from, shape, :general)
          capture(["as_type"], fn -> Nx.as_type(t, to) end)
        end

    bitcast =
      for from <- @all, to <- @all, elem(from, 1) == elem(to, 1) do
        t = tensor(from, {3, 4}, :special)
        capture(["bitcast"], fn -> Nx.bitcast(t, to) end)
      end

    f8 =
      for from <- @all ++ @f8, to <- @all ++ @f8, from in @f8 or to in @f8 do
        t = tensor(from, {4, 8}, :special)
        [t] = repair(fn t -> Nx.as_type(t, to) end, [t])
        capture(["as_type"], fn -> Nx.as_type(t, to) end)
      end ++
        for from <- @f8 ++ [{:u, 8}, {:s, 8}],
            to <- @f8 ++ [{:u, 8}, {:s, 8}],
            from in @f8 or to in @f8 do
          t = tensor(from, {3, 4}, :special)
          capture(["bitcast"], fn -> Nx.bitcast(t, to) end)
        end

    [as_type, bitcast, f8]
  end

  # The structural families (reductions, shapes, indexing, dot, conv, ...).
  def family_cases(family), do: NxVulkan.Fixtures.StructuralCases.family_cases(family)

  defp specials_or_ints({k, _} = type) when k in [:u, :s],
    do: [0, 1, 2, 3, 4, 5] ++ Tuple.to_list(int_range(type))

  defp specials_or_ints(type), do: specials(type)

  # All pairs of `col` ({n, 1}) and `row` ({n}); values of `row` on which the op raises for
  # some element of `col` are dropped (and then values of `col`).
  defp cross_case(fun, keep, col, row) do
    if runs?(fn -> fun.(col, row) end) do
      capture(keep, fn -> fun.(col, row) end)
    else
      cl = to_list_flat(col)
      rl = to_list_flat(row)

      ok? = fn a, b ->
        runs?(fn -> fun.(from_list([a], col.type, {}), from_list([b], row.type, {})) end)
      end

      rl = Enum.filter(rl, fn b -> Enum.all?(cl, &ok?.(&1, b)) end)
      cl = Enum.filter(cl, fn a -> Enum.all?(rl, &ok?.(a, &1)) end)

      if rl == [] or cl == [] do
        []
      else
        col = from_list(cl, col.type, {length(cl), 1})
        row = from_list(rl, row.type, {length(rl)})
        capture(keep, fn -> fun.(col, row) end)
      end
    end
  end
end
