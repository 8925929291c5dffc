defmodule Nx.Vulkan.Combiner do
  @moduledoc false
  # The function of reduce/5 and window_reduce/6 as the engine's combiner: applied once to two
  # scalar parameters of the output type under Nx.Defn.Expr (as Nx.Defn traces it), its
  # expression is kept when every node is an elementwise op the engine has (or a constant),
  # and spelled as the engine's option "combiner" (engine/src/ops/reduce/combiner.hpp):
  # steps "<op> <type> <operand>..." separated by ";", operands `x` (the element), `acc`,
  # `s<N>` (step N) or `<type>#<hex bytes>` (a constant).
  #
  # Traces are cached per function and type when the function's captured values are plain
  # data (numbers, atoms, small binaries and collections of them): a closure is equal to
  # another only with equal captured values, so the function term itself is the key. Anything
  # else (captured tensors, references, pids, functions) is traced on every call.
  #
  # The engine folds in a tree (Nx.BinaryBackend folds left to right), so only associative
  # and commutative functions give Nx.BinaryBackend's results exactly (integers); float
  # results of such functions differ by rounding only.

  alias Nx.Tensor, as: T
  alias Nx.Defn.Expr
  alias Nx.Vulkan.{Native, Tables}

  @max_cached 4096

  @doc "`{:ok, combiner}` for `fun` over scalars of `type`, or `{:error, reason}`."
  def trace(fun, type) when is_function(fun, 2) do
    if cacheable?(fun) do
      key = {fun, type}

      case Tables.with_tables(fn -> :ets.lookup(Tables.combiners(), key) end) do
        [{_, answer}] ->
          answer

        [] ->
          answer = do_trace(fun, type)

          Tables.with_tables(fn ->
            if :ets.info(Tables.combiners(), :size) >= @max_cached,
              do: :ets.delete_all_objects(Tables.combiners())

            :ets.insert(Tables.combiners(), {key, answer})
          end)

          answer
      end
    else
      do_trace(fun, type)
    end
  end

  def trace(_fun, _type), do: {:error, "the function does not take two arguments"}

  defp cacheable?(fun) do
    {:env, env} = Function.info(fun, :env)
    plain?(env)
  end

  defp plain?(term) when is_number(term) or is_atom(term), do: true
  defp plain?(term) when is_bitstring(term), do: bit_size(term) <= 4096 * 8
  defp plain?(term) when is_list(term), do: plain_list?(term)
  defp plain?(term) when is_tuple(term), do: term |> Tuple.to_list() |> plain_list?()

  defp plain?(term) when is_map(term),
    do: term |> Map.to_list() |> Enum.all?(fn {k, v} -> plain?(k) and plain?(v) end)

  defp plain?(_), do: false

  defp plain_list?([]), do: true
  defp plain_list?([h | t]), do: plain?(h) and plain_list?(t)
  defp plain_list?(tail), do: plain?(tail)

  defp do_trace(fun, type) do
    previous = Nx.default_backend(Expr)

    try do
      x = Expr.parameter(:nx_vulkan_combiner, type, {}, 0)
      acc = Expr.parameter(:nx_vulkan_combiner, type, {}, 1)
      result = fun.(x, acc)
      {:ok, encode(result, type)}
    rescue
      error ->
        {:error, "the function could not be traced on scalars: " <> Exception.message(error)}
    catch
      {:not_scalar_expression, reason} -> {:error, reason}
    after
      Nx.default_backend(previous)
    end
  end

  defp encode(result, type) when is_number(result),
    do: encode(Nx.tensor(result, type: type), type)

  defp encode(%T{} = result, type) do
    {ref, state} = walk(result, %{memo: %{}, steps: [], count: 0})

    # The result in the output type, as Nx.Defn.Expr casts it, and at least one step.
    {_ref, state} =
      if result.type != type or not Regex.match?(~r/^s\d+$/, ref) do
        add_step(state, "as_type #{type_name(type)} #{ref}")
      else
        {ref, state}
      end

    state.steps |> Enum.reverse() |> Enum.join(";")
  end

  defp encode(other, _type),
    do: throw({:not_scalar_expression, "the function returned #{inspect(other)}, not a tensor"})

  defp walk(%T{shape: shape} = t, _state) when shape != {},
    do:
      not_expressible(
        "it computes a tensor of shape #{inspect(shape)}, not a scalar (#{expr_op(t)})"
      )

  defp walk(%T{data: %Expr{id: id, op: op, args: args}, type: type} = t, state) do
    case state.memo do
      %{^id => ref} ->
        {ref, state}

      _ ->
        {ref, state} = node(op, args, type, t, state)
        {ref, %{state | memo: Map.put(state.memo, id, ref)}}
    end
  end

  defp walk(%T{} = t, _state),
    do: not_expressible("it uses a tensor of #{inspect(t.data.__struct__)}")

  defp node(:parameter, [0], _type, _t, state), do: {"x", state}
  defp node(:parameter, [1], _type, _t, state), do: {"acc", state}
  defp node(:constant, [number], type, _t, state), do: {constant(number, type), state}
  defp node(:metadata, [expr, _meta], _type, _t, state), do: walk(expr, state)

  defp node(op, args, type, _t, state) do
    if op in Native.elementwise_ops() and args != [] and Enum.all?(args, &match?(%T{}, &1)) do
      {refs, state} = Enum.map_reduce(args, state, &walk/2)
      add_step(state, Enum.join([op, type_name(type) | refs], " "))
    else
      not_expressible("it uses #{op}, which has no scalar expression in the engine")
    end
  end

  defp add_step(state, step) do
    ref = "s#{state.count}"
    {ref, %{state | steps: [step | state.steps], count: state.count + 1}}
  end

  defp constant(number, type) do
    bytes =
      %T{shape: {}, type: type, names: []}
      |> Nx.BinaryBackend.constant(number, [])
      |> Nx.to_binary()

    type_name(type) <> "#" <> Base.encode16(bytes, case: :lower)
  end

  defp type_name({:f8_e4m3fn, 8}), do: "f8_e4m3fn"
  defp type_name({kind, bits}), do: "#{kind}#{bits}"

  defp expr_op(%T{data: %Expr{op: op}}), do: op
  defp expr_op(_), do: :tensor

  defp not_expressible(why),
    do: throw({:not_scalar_expression, "the function cannot be combined natively: " <> why})
end
