defmodule Nx.Vulkan.Compiler.Branches do
  @moduledoc false
  # A `cond` whose branches are small and run no host code becomes selects: every predicate
  # and every branch is computed on the device, then `select(pred1, branch1, select(pred2,
  # ...))` keeps the first true branch's values, exactly as Nx.Defn.Evaluator's choice would
  # (the same kernels compute them). Any other cond becomes a step of its own
  # (Nx.Vulkan.Compiler.HostSteps): the first true predicate's branch runs as a compiled entry,
  # over the values it reads from outside (parameterize/3), chosen on the device where the
  # device gates runs, else by reading the predicates on the host.

  alias Nx.Defn.{Composite, Expr, Tree}
  alias Nx.Tensor, as: T

  # Nodes a cond's branches may compute of their own, all branches together.
  @max_branch_nodes 256
  @host_ops [:while, :io_call, :runtime_call]

  @doc "The ids of `expr`'s own scope (values a cond's branches read from outside)."
  def outer_ids(expr), do: Tree.scope_ids(expr)

  @doc "Whether the cond `t` is cheap to compute whole: small branches, no host code."
  def cheap?(%T{data: %Expr{op: :cond, args: [clauses, last]}}, outer_ids) do
    exprs = Enum.flat_map(clauses, fn {pred, body} -> [pred, body] end) ++ [last]

    try do
      seen =
        Enum.reduce(
          exprs,
          %{},
          &Composite.reduce(&1, &2, fn t, seen -> own(t, seen, outer_ids) end)
        )

      map_size(seen) <= @max_branch_nodes
    catch
      :not_cheap -> false
    end
  end

  defp own(%T{data: %Expr{id: id, op: op}} = t, seen, outer_ids) do
    cond do
      Map.has_key?(seen, id) or Map.has_key?(outer_ids, id) ->
        seen

      op in @host_ops ->
        throw(:not_cheap)

      map_size(seen) > @max_branch_nodes ->
        throw(:not_cheap)

      true ->
        t
        |> Tree.apply_args(:scope, Map.put(seen, id, true), &{&1, own(&1, &2, outer_ids)})
        |> elem(1)
    end
  end

  defp own(_number, seen, _outer_ids), do: seen

  @doc "A branch's value as the cond's leaf `leaf` holds it: its type, shape and names."
  def conform(value, leaf) do
    value = if value.type == leaf.type, do: value, else: Nx.as_type(value, leaf.type)

    value =
      if value.shape == leaf.shape,
        do: value,
        else:
          value
          |> Nx.rename(List.duplicate(nil, tuple_size(value.shape)))
          |> Nx.broadcast(leaf.shape)

    Nx.rename(value, leaf.names)
  end

  @doc "Whether `expr`'s own scope has a cond that is not cheap (a host step)."
  def host_cond?(expr) do
    outer_ids = outer_ids(expr)
    Composite.reduce(expr, %{}, &find_host_cond(&1, &2, outer_ids))
    false
  catch
    :host_cond -> true
  end

  defp find_host_cond(%T{data: %Expr{id: id, op: op}} = t, seen, outer_ids) do
    cond do
      Map.has_key?(seen, id) ->
        seen

      op == :cond and not cheap?(t, outer_ids) ->
        throw(:host_cond)

      true ->
        t
        |> Tree.apply_args(
          :scope,
          Map.put(seen, id, true),
          &{&1, find_host_cond(&1, &2, outer_ids)}
        )
        |> elem(1)
    end
  end

  defp find_host_cond(_other, seen, _outer_ids), do: seen

  @doc """
  The cond `t` as a node that computes every predicate and branch and selects (a
  runtime_call node the Evaluator runs while the program records: the selects become nodes).
  """
  def as_selects(%T{data: %Expr{op: :cond, args: [clauses, last]} = expr} = t, template) do
    {preds, bodies} = Enum.unzip(clauses)
    input = {List.to_tuple(preds), List.to_tuple(bodies ++ [last])}

    select = fn {preds, bodies}, _opts ->
      branches = bodies |> Tuple.to_list() |> Enum.map(&Composite.flatten_list([&1]))
      {[last], clauses} = branches |> Enum.reverse() |> Enum.split(1)
      pairs = Enum.zip(Enum.reverse(Tuple.to_list(preds)), clauses)
      leaves = Composite.flatten_list([template])

      # Branches may name their axes differently; the cond's own names are put back after.
      unnamed = &Nx.rename(&1, List.duplicate(nil, tuple_size(&1.shape)))

      selected =
        Enum.reduce(pairs, Enum.map(last, unnamed), fn {pred, values}, acc ->
          Enum.zip_with(values, acc, &Nx.select(unnamed.(pred), unnamed.(&1), &2))
        end)
        |> Enum.zip_with(leaves, &conform/2)

      if match?(%T{}, template), do: hd(selected), else: List.to_tuple(selected)
    end

    %{t | data: %{expr | op: :runtime_call, args: [input, select, template, []]}}
  end

  @doc """
  A branch `body` as an expression of its own: each node it reads from outside its cond
  (`outer_ids`, the function's and a loop body's parameters, an outer tuple's elements) becomes
  a parameter. `free` numbers the outer nodes of the cond's branches together, as
  `{[node], %{id => position}}`. Returns `{body, params, positions, free}`: the parameters in
  order, and each one's position in `free`.
  """
  def parameterize(body, outer_ids, free) do
    {body, {_cache, params, free}} =
      Composite.traverse(body, {%{}, [], free}, &param_node(&1, &2, outer_ids))

    {params, positions} = params |> Enum.reverse() |> Enum.unzip()
    {body, params, positions, free}
  end

  defp param_node(%T{data: %Expr{op: :constant}} = t, acc, _outer_ids), do: {t, acc}

  defp param_node(%T{data: %Expr{id: id, op: op, args: args}} = t, acc, outer_ids) do
    {cache, params, {nodes, positions} = free} = acc

    cond do
      Map.has_key?(cache, id) ->
        {Map.fetch!(cache, id), acc}

      outer?(id, op, args, outer_ids) ->
        {position, free} =
          case positions do
            %{^id => position} -> {position, free}
            %{} -> {length(nodes), {nodes ++ [t], Map.put(positions, id, length(nodes))}}
          end

        param = Expr.parameter(t, t.data.context, length(params))
        {param, {Map.put(cache, id, param), [{param, position} | params], free}}

      true ->
        {args, {cache, params, free}} =
          Tree.apply_args(t, :scope, acc, &param_node(&1, &2, outer_ids))

        new = Tree.put_args(t, args)
        {new, {Map.put(cache, id, new), params, free}}
    end
  end

  defp param_node(other, acc, _outer_ids), do: {other, acc}

  defp outer?(_id, :parameter, _args, _outer_ids), do: true

  # Tuples are read through their elements: an outer tuple's element is a parameter.
  defp outer?(_id, :elem, [%T{data: %Expr{id: tuple_id}}, _], outer_ids)
       when is_map_key(outer_ids, tuple_id),
       do: true

  defp outer?(id, _op, _args, outer_ids), do: Map.has_key?(outer_ids, id)
end
