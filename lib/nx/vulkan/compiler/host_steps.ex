defmodule Nx.Vulkan.Compiler.HostSteps do
  @moduledoc false
  # The host steps of a compiled function: code that runs on the host between its device
  # segments, on each call.
  #
  #   * a `while` loop: its predicate is read on the host, and each trip runs one compiled
  #     program (the body, then the predicate of its result); the loop's state stays on the
  #     device. A loop whose trip count is known when it compiles and whose body has steps of
  #     its own (a large cond) reads no predicate: its body runs that many times;
  #   * a `cond` too large to compute whole, or with host code in a branch: the first true
  #     predicate's branch runs as a compiled entry over the values it reads from outside (the
  #     others never run). Where every branch is one program and the device gates runs
  #     (conditional rendering), each branch is recorded gated on its own flag computed on the
  #     device, and no predicate is read on the host; else the predicates are read on the host;
  #   * an `io_call` hook and a `runtime_call` function, called with device tensors;
  #   * an op the engine refuses, run by `Nx.Vulkan.Backend`'s host fallback (and counted by
  #     its telemetry).
  #
  # `rewrite/2` turns the `while`, `io_call` and `runtime_call` nodes of a traced expression's
  # own scope into `runtime_call` nodes whose function records the host step, so that
  # Nx.Defn.Evaluator, which drives the recording, passes each through
  # `Nx.Vulkan.Compiler.Recorder.host_step/3`. A refused op records itself (host_op/4).

  alias Nx.Defn.{Composite, Expr, Tree}
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B
  alias Nx.Vulkan.Compiler.{Branches, Recorder, Runner}

  @doc """
  `expr` with its own scope's `while`, `io_call` and `runtime_call` nodes made host steps.
  `lower_while.(initial, arg, condition, body)` lowers a loop: `{:unroll, trips, body_fun}`
  for a fixed trip count (the body, evaluated on the state, recorded that many times),
  `{:loop_kernel, entry}` for one the engine runs in one launch (a compiled entry taking the
  state and returning the final state), `{:loop_kernel_until, entry}` for a data-dependent one
  it runs in launches of many trips (the entry also returns whether the loop ended),
  `{:repeat, trips, entry}` for a fixed trip count whose body has steps of its own (the body's
  entry called that many times, no predicate read), or
  `{:loop, cond_entry, step_entry, block}`, compiled entries for the predicate and for the
  body followed by the predicate, and `{trips, block_entry}` (or nil) running that many
  trips at once, each kept only while the predicate holds. `lower_branch.(params, body,
  template)` compiles a cond's branch (Branches.parameterize/3) into an entry whose result is
  the cond's (`template`'s leaves, as a tuple).
  """
  def rewrite(expr, {lower_while, lower_branch}, hooks) do
    context = {lower_while, hooks, Branches.outer_ids(expr), lower_branch}
    {expr, _} = Composite.traverse(expr, %{}, &rewrite_node(&1, &2, context))
    expr
  end

  defp rewrite_node(%T{data: %Expr{id: id, op: op}} = t, cache, context) do
    case cache do
      %{^id => new} ->
        {new, cache}

      %{} when op == :cond ->
        if Branches.cheap?(t, elem(context, 2)) do
          {args, cache} = Tree.apply_args(t, :scope, cache, &rewrite_node(&1, &2, context))
          new = Branches.as_selects(put_in(t.data.args, args), template(t, List.last(args)))
          {new, Map.put(cache, id, new)}
        else
          new = host_cond(t, context)
          {new, cache} = rewrite_node(new, cache, context)
          {new, Map.put(cache, id, new)}
        end

      %{} ->
        {args, cache} = Tree.apply_args(t, :scope, cache, &rewrite_node(&1, &2, context))
        new = host_form(put_in(t.data.args, args), context)
        {new, Map.put(cache, id, new)}
    end
  end

  defp rewrite_node(other, cache, _context), do: {other, cache}

  # The template of a node whose value is `composite` (a tuple-typed node's leaves).
  defp template(t, composite),
    do: if(match?({:tuple, _}, t.type), do: Nx.to_template(composite), else: Nx.to_template(t))

  defp host_form(%T{data: %Expr{op: :while, args: args}} = t, {lower_while, _, _, _}) do
    [initial, arg, condition, body] = args
    out = template(t, body)

    case lower_while.(initial, arg, condition, body) do
      {:loop, cond_entry, step_entry, block} ->
        as_step(t, initial, {:while, {cond_entry, step_entry, block}}, out, :outputs)

      {:unroll, trips, body_fun} ->
        unrolled(t, initial, trips, body_fun, out)

      {:loop_kernel, entry} ->
        as_step(t, initial, {:loop_kernel, entry}, out, :outputs)

      {:loop_kernel_until, entry} ->
        as_step(t, initial, {:loop_kernel_until, entry}, out, :outputs)

      {:repeat, trips, entry} ->
        as_step(t, initial, {:repeat, {trips, entry}}, out, :outputs)
    end
  end

  defp host_form(%T{data: %Expr{op: :io_call, args: args}} = t, {_, hooks, _, _}) do
    [input, callback_spec, template, _ref] = args
    as_step(t, input, {:io_call, callback_spec, hooks}, template, :passthrough)
  end

  defp host_form(%T{data: %Expr{op: :runtime_call, args: args}} = t, _context) do
    case args do
      [input, {:cond, _, _, _} = action, template, []] ->
        as_step(t, input, action, template, :outputs)

      [input, fun, template, opts] ->
        as_step(t, input, {:runtime_call, fun, opts, template}, template, :outputs)
    end
  end

  defp host_form(t, _context), do: t

  # A cond as a runtime_call node reading its predicates and the outer values of its branches
  # (each branch an entry over its own); rewrite_node/3 then makes it a host step.
  defp host_cond(%T{data: %Expr{op: :cond, args: [clauses, last]} = expr} = t, context) do
    {_, _, outer_ids, lower_branch} = context
    out = template(t, last)
    {preds, bodies} = Enum.unzip(clauses)

    {branches, {free, _}} =
      Enum.map_reduce(bodies ++ [last], {[], %{}}, fn body, free ->
        {body, params, positions, free} = Branches.parameterize(body, outer_ids, free)
        {{lower_branch.(params, body, out), positions}, free}
      end)

    input = {List.to_tuple(preds), List.to_tuple(free)}
    # Decided on the device where every predicate is a scalar and every branch can be gated:
    # known once, here.
    gated? =
      Enum.all?(preds, &(&1.shape == {})) and
        Enum.all?(branches, fn {entry, _} -> Runner.gateable?(entry) end)

    action = {:cond, length(preds), branches, gated?}
    %{t | data: %{expr | op: :runtime_call, args: [input, action, out, []]}}
  end

  # The node as a runtime_call whose function, run by the Evaluator while recording, records
  # the step (an io_call's value is its input: the step has no outputs).
  defp as_step(%T{data: expr} = t, input, action, template, mode) do
    record = fn value, _opts ->
      {slots, tensors} = slots(value)

      case mode do
        :outputs ->
          Recorder.host_step({action, slots}, tensors, template)

        :passthrough ->
          Recorder.host_step({action, slots}, tensors, {})
          value
      end
    end

    %{t | data: %{expr | op: :runtime_call, args: [input, record, template, []]}}
  end

  # A loop with a fixed trip count: its body recorded that many times, into the program being
  # recorded (no host step: the whole loop is one submission).
  defp unrolled(%T{data: expr} = t, initial, trips, body_fun, template) do
    record = fn value, _opts ->
      state =
        Enum.reduce(1..trips//1, Composite.flatten_list([value]), fn _, state ->
          [body_fun.(thunks(state))] |> Composite.flatten_list()
        end)

      if match?(%T{}, template), do: hd(state), else: List.to_tuple(state)
    end

    %{t | data: %{expr | op: :runtime_call, args: [initial, record, template, []]}}
  end

  @doc "Records an op the engine refuses (the backend's host fallback) as a host step."
  def host_op(op, device, [out | args], reason) do
    {slots, tensors} = deep_slots(args, [])
    out = Nx.to_template(out)

    Recorder.host_step(
      {{:host_op, op, device, reason}, [out | slots]},
      Enum.reverse(tensors),
      out
    )
  end

  ## Slots: a value's structure with each device tensor replaced by its template

  defp slots(value) do
    {slots, tensors} =
      Composite.traverse(value, [], fn
        %T{} = t, acc -> {Nx.to_template(t), [t | acc]}
        other, acc -> {other, acc}
      end)

    {slots, Enum.reverse(tensors)}
  end

  defp deep_slots(list, acc) when is_list(list), do: Enum.map_reduce(list, acc, &deep_slots/2)
  defp deep_slots(%T{data: %B{}} = t, acc), do: {{:slot, Nx.to_template(t)}, [t | acc]}
  defp deep_slots(other, acc), do: {other, acc}

  defp fill(slots, tensors) do
    {value, []} =
      Composite.traverse(slots, tensors, fn
        %T{}, [t | rest] -> {t, rest}
        other, acc -> {other, acc}
      end)

    value
  end

  defp deep_fill(list, tensors) when is_list(list),
    do: Enum.map_reduce(list, tensors, &deep_fill/2)

  defp deep_fill({:slot, _}, [t | rest]), do: {t, rest}
  defp deep_fill(other, tensors), do: {other, tensors}

  ## Running

  @doc """
  Runs a step on the device tensors `tensors` (in the order the step recorded them); returns
  its outputs as a flat list of tensors.
  """
  def run({{:while, {cond_entry, step_entry, block}}, _slots}, state, _device) do
    loop(state, Runner.run(cond_entry, thunks(state)), 0, step_entry, block)
  end

  def run({{:cond, count, branches, gated?}, _slots}, tensors, _device) do
    {preds, free} = Enum.split(tensors, count)
    free = List.to_tuple(free)
    args = fn positions -> Enum.map(positions, &elem(free, &1)) end

    if gated? do
      gated_cond(preds, branches, args)
    else
      index = Enum.find_index(preds, &(Nx.to_number(&1) != 0)) || count
      {entry, positions} = Enum.at(branches, index)
      entry |> Runner.run(thunks(args.(positions))) |> Tuple.to_list()
    end
  end

  def run({{:repeat, {trips, entry}}, _slots}, state, _device) do
    Enum.reduce(1..trips//1, state, fn _, state ->
      entry |> Runner.run(thunks(state)) |> List.wrap() |> Composite.flatten_list()
    end)
  end

  def run({{:loop_kernel, entry}, _slots}, state, _device) do
    entry |> Runner.run(thunks(state)) |> List.wrap() |> Composite.flatten_list()
  end

  def run({{:loop_kernel_until, entry}, _slots} = step, state, device) do
    outputs = entry |> Runner.run(thunks(state)) |> Tuple.to_list()
    {state, [done]} = Enum.split(outputs, -1)
    if Nx.to_number(done) != 0, do: state, else: run(step, state, device)
  end

  def run({{:io_call, callback_spec, hooks}, slots}, tensors, _device) do
    case resolve_io_call(callback_spec, hooks) do
      nil -> :ok
      fun -> fun.(fill(slots, tensors))
    end

    []
  end

  def run({{:runtime_call, fun, opts, template}, slots}, tensors, device) do
    previous = Nx.default_backend({B, device: device})

    result =
      try do
        fun.(fill(slots, tensors), opts)
      after
        Nx.default_backend(previous)
      end

    unless Nx.compatible?(template, result) do
      raise "expected the runtime_call function to match the given output template"
    end

    Composite.flatten_list([result])
  end

  def run({{:host_op, op, device, reason}, [out | slots]}, tensors, _device) do
    {args, []} = deep_fill(slots, tensors)
    B.host(op, device, [out | args], reason) |> List.wrap() |> Composite.flatten_list()
  end

  # A cond decided on the device: each branch runs gated on its own flag (the first true
  # predicate's branch, else the last), so only the chosen one computes, and selects on the same
  # flags keep its results. The host reads nothing.
  defp gated_cond(preds, branches, args) do
    # Each branch's predicate as chosen (u8, for the selects: they then compute in the values'
    # type) and as its gate (s32, a select between numbers).
    {chosen, none} =
      Enum.map_reduce(preds, nil, fn pred, earlier ->
        chosen = if earlier, do: Nx.logical_and(pred, Nx.logical_not(earlier)), else: pred
        {chosen, if(earlier, do: Nx.logical_or(earlier, pred), else: pred)}
      end)

    gates = Enum.map(chosen, &Nx.select(&1, 1, 0)) ++ [Nx.select(none, 0, 1)]

    [last | rest] =
      Enum.zip_with(branches, gates, fn {entry, positions}, gate ->
        entry |> Runner.run_gated(thunks(args.(positions)), gate) |> Tuple.to_list()
      end)
      |> Enum.reverse()

    rest
    |> Enum.zip(Enum.reverse(chosen))
    |> Enum.reduce(last, fn {values, chosen}, acc ->
      Enum.zip_with(values, acc, &Nx.select(chosen, &1, &2))
    end)
  end

  # One trip per program for the first trips (most loops are short), then blocks of trips.
  @single_trips 4

  defp loop(state, pred, trips, step_entry, block) do
    cond do
      Nx.to_number(pred) == 0 ->
        state

      block == nil or trips < @single_trips ->
        {state, pred} = Runner.run(step_entry, thunks(state))
        loop(Composite.flatten_list([state]), pred, trips + 1, step_entry, block)

      true ->
        {_, block_entry} = block
        {state, pred} = Runner.run(block_entry, thunks(state))
        loop(Composite.flatten_list([state]), pred, trips + 1, step_entry, block)
    end
  end

  defp thunks(tensors), do: Enum.map(tensors, &fn -> &1 end)

  # As Nx.Defn.Evaluator resolves them.
  defp resolve_io_call({:fn, fun}, _hooks), do: fun
  defp resolve_io_call({:named, name, callback}, hooks), do: hooks[name] || callback
end
