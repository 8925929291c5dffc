defmodule Nx.Vulkan.Compiler.Loops do
  @moduledoc false
  # The trip count of a `while` known when it compiles: the loop's predicate reads only state
  # that starts as a constant and that the body updates from such state alone (a counter
  # `i = 0` .. `i < n`, any step, any comparison). That part of the loop is run on the host,
  # on Nx.BinaryBackend, until the predicate fails; the compiler then records the body that
  # many times into one program.

  alias Nx.Defn.{Composite, Evaluator, Expr, Tree}
  alias Nx.Tensor, as: T

  # Unrolled loops hold at most this many expression nodes (trips times the body's nodes).
  @max_unrolled 8192

  @doc """
  `{:ok, trips}` when the loop's trip count is fixed and its body, that many times, is small
  enough to record whole; else `:unknown`.
  """
  def unrolled_trips(initial, arg, condition, body) do
    max_trips = div(@max_unrolled, max(size(body), 1))

    if max_trips > 0,
      do: trip_count(initial, arg, condition, body, max_trips),
      else: :unknown
  end

  # Trips in one block of a loop whose trip count is not fixed (each reads the predicate).
  @block_trips 32

  @doc "How many trips of a loop with this body one block program runs."
  def block_trips(body), do: min(@block_trips, div(@max_unrolled, max(size(body), 1)))

  @doc """
  `{:ok, trips}` when the loop's trip count is fixed (at most `max_trips`), else `:unknown`.
  """
  def trip_count(initial, arg, condition, body, max_trips) do
    initial = Composite.flatten_list([initial])
    body = Composite.flatten_list([body])

    constants =
      for {t, k} <- Enum.with_index(initial), value = constant(t), into: %{}, do: {k, value}

    counters = counters(Map.keys(constants) |> MapSet.new(), body)

    if map_size(constants) > 0 and MapSet.subset?(params(condition), counters) do
      count(arg, condition, body, Map.take(constants, MapSet.to_list(counters)), max_trips)
    else
      :unknown
    end
  end

  # The state that starts constant and that the body computes from such state only.
  defp counters(candidates, body) do
    kept =
      body
      |> Enum.with_index()
      |> Enum.filter(fn {t, k} -> k in candidates and MapSet.subset?(params(t), candidates) end)
      |> MapSet.new(&elem(&1, 1))

    if MapSet.equal?(kept, candidates), do: kept, else: counters(kept, body)
  end

  defp constant(%T{data: %Expr{op: :constant, args: [number]}} = t),
    do: Nx.broadcast(Nx.tensor(number, type: t.type, backend: Nx.BinaryBackend), t.shape)

  defp constant(%T{data: %Expr{op: :tensor, args: [tensor]}}),
    do: Nx.backend_copy(tensor, Nx.BinaryBackend)

  defp constant(_), do: nil

  # The expression nodes of `expr`, nested scopes included.
  defp size(expr) do
    {_, seen} = Composite.traverse(expr, %{}, &count_nodes/2)
    map_size(seen)
  end

  defp count_nodes(%T{data: %Expr{id: id}} = t, seen) do
    if Map.has_key?(seen, id) do
      {t, seen}
    else
      {_, seen} = Tree.apply_args(t, :all, Map.put(seen, id, true), &count_nodes/2)
      {t, seen}
    end
  end

  defp count_nodes(other, seen), do: {other, seen}

  # The loop parameters (state positions) an expression of the loop's scope reads.
  defp params(expr) do
    {_, {params, _}} = walk(expr, {MapSet.new(), %{}})
    params
  end

  defp walk(%T{data: %Expr{id: id, op: op, args: args}} = t, {params, seen} = acc) do
    cond do
      Map.has_key?(seen, id) ->
        {t, acc}

      op == :parameter ->
        [i] = args
        {t, {MapSet.put(params, i), Map.put(seen, id, true)}}

      true ->
        {_, acc} = Tree.apply_args(t, :scope, {params, Map.put(seen, id, true)}, &walk/2)
        {t, acc}
    end
  end

  defp walk(other, acc), do: {other, acc}

  # Runs the counters on the host until the predicate fails.
  defp count(arg, condition, body, values, max_trips) do
    n = length(Composite.flatten_list([arg]))
    keys = Map.keys(values)
    predicate = evaluator(arg, condition)
    step = evaluator(arg, List.to_tuple(Enum.map(keys, &Enum.at(body, &1))))

    Nx.with_default_backend(Nx.BinaryBackend, fn ->
      Enum.reduce_while(0..max_trips, values, fn trips, values ->
        params = params_of(values, n)

        cond do
          Nx.to_number(predicate.(params)) == 0 -> {:halt, {:ok, trips}}
          trips == max_trips -> {:halt, :unknown}
          true -> {:cont, keys |> Enum.zip(Tuple.to_list(step.(params))) |> Map.new()}
        end
      end)
    end)
  end

  defp evaluator(arg, expr) do
    compiled = Evaluator.__compile__(:trip_count, [arg], fn _ -> expr end, [])

    fn params ->
      [result] = compiled.([params])
      result
    end
  end

  # Only the counters are ever read (counters/2 made sure).
  defp params_of(values, n) do
    for k <- 0..(n - 1) do
      case values do
        %{^k => value} -> fn -> value end
        %{} -> fn -> raise "the loop's trip count read state that is not constant" end
      end
    end
  end
end
