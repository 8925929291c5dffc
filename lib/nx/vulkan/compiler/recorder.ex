defmodule Nx.Vulkan.Compiler.Recorder do
  @moduledoc false
  # Lowers a traced defn expression into the engine's flat program: the expression is
  # evaluated once by Nx.Defn.Evaluator on placeholder tensors while this process records,
  # so every node passes through the same Nx.Vulkan.Backend callback (and Nx.Vulkan.OpArgs
  # encoding) that the eager path uses, and becomes a node instead of an op on the device.
  #
  # A placeholder is a Vulkan tensor whose ref is `{:nxv_value, value}`, with `value` one of
  # `{:param, i}` (argument i of the defn), `{:capture, j}` (a device tensor the program reads:
  # a tensor the function captured, or a constant uploaded while recording) or `{:node, k}`.
  # Code that must run on the host between device work (a `while` loop driven by its
  # predicate, an io_call hook, a runtime_call, an op the engine refuses) is recorded as a host
  # step: its outputs are placeholders `{:host, s, j}`, and `finish` cuts the program into
  # device segments around the steps (Nx.Vulkan.Compiler.Segments). Anything else that needs a
  # placeholder's data on the host stops the recording with `Nx.Vulkan.Compiler.Recorder.Stop`:
  # the function then runs through the Evaluator instead.

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B
  alias Nx.Vulkan.Native

  defmodule Stop do
    @moduledoc false
    defexception [:reason]
    @impl true
    def message(%{reason: reason}), do: "the function cannot be one program: #{reason}"
  end

  @key __MODULE__
  # Integer literals of at most this many elements become nodes instead of captures.
  @max_literal 16

  @doc "Whether this process is recording."
  def active?, do: Process.get(@key) != nil

  @doc "Stops the recording (inside one), saying why."
  def stop!(reason), do: raise(Stop, reason: reason)

  @doc """
  Records `fun` (run with the placeholder params of `templates`) on `device`. Returns
  `{:ok, program}` with the flat program and the function's result (its leaves
  placeholders), or `{:stop, reason}`.
  """
  def record(device, templates, fun) do
    state = %{
      device: device,
      nodes: [],
      node_count: 0,
      steps: [],
      step_count: 0,
      captures: [],
      capture_ids: %{},
      params_used: MapSet.new()
    }

    # The flat list of parameter templates, by parameter index (vars may be containers).
    templates =
      templates
      |> Nx.Defn.Composite.flatten_list()
      |> Enum.sort_by(fn %T{data: %Nx.Defn.Expr{op: :parameter, args: [i]}} -> i end)

    previous_backend = Nx.default_backend({B, device: device})
    # A loop body is recorded while the function around it records (a jitted function called
    # inside another, see Nx.Vulkan.Compiler.__jit__/5): that recording resumes after.
    outer = Process.put(@key, state)

    try do
      params =
        templates
        |> Enum.with_index()
        |> Enum.map(fn {template, i} ->
          fn ->
            update(fn s -> %{s | params_used: MapSet.put(s.params_used, i)} end)
            placeholder(template, device, {:param, i})
          end
        end)

      result = fun.(params)
      {:ok, finish(Process.get(@key), templates, result)}
    rescue
      error in Stop -> {:stop, error.reason}
    after
      if outer, do: Process.put(@key, outer), else: Process.delete(@key)
      Nx.default_backend(previous_backend)
    end
  end

  @doc """
  A node for the backend's native call `op` (an op-table name) producing `out` from
  `inputs` with `options`: `{:ok, placeholder}`, or `{:host, reason}` when the engine would
  not run it natively (the backend then takes its host path, which stops the recording).
  """
  def node(op, device, out, inputs, options) do
    with true <- Native.check(device, op, out, inputs, options) do
      {id, _depends} = Native.op_entry(op)
      values = Enum.map(inputs, &value_of(&1, device))
      state = Process.get(@key)
      k = state.node_count
      node = {id, out.type, out.shape, values, options}
      Process.put(@key, %{state | nodes: [node | state.nodes], node_count: k + 1})
      {:ok, placeholder(out, device, {:node, k})}
    end
  end

  @doc """
  A host step: `action` (run by `Nx.Vulkan.Compiler.HostSteps.run/3` on each call) reads the
  tensors `inputs` and returns tensors like the leaves of `out_template`. Returns placeholders
  in `out_template`'s structure.
  """
  def host_step(action, inputs, out_template) do
    device = Process.get(@key).device
    values = Enum.map(inputs, &value_of(&1, device))
    state = Process.get(@key)
    s = state.step_count
    leaves = Nx.Defn.Composite.flatten_list([out_template])
    specs = Enum.map(leaves, &{&1.type, &1.shape})
    templates = Enum.map(inputs, &Nx.to_template/1)
    step = {state.node_count, action, values, templates, specs}
    Process.put(@key, %{state | steps: [step | state.steps], step_count: s + 1})

    {out, _} =
      Nx.Defn.Composite.traverse(out_template, 0, fn t, j ->
        {placeholder(t, device, {:host, s, j}), j + 1}
      end)

    out
  end

  defp placeholder(template, device, value) do
    %{template | data: %B{ref: {:nxv_value, value}, device: device}}
  end

  # What a node reads: a placeholder's value, a small integer literal of the function's code
  # (nodes: the engine computes what reads only such values when it compiles the program, so
  # that a random generator's rotation table and the slices of it cost no launch), or a tensor
  # made a capture (once per buffer reference).
  defp value_of(%T{data: %B{ref: {:nxv_value, value}}}, _device), do: value

  defp value_of(%T{data: data, type: {kind, _}} = tensor, device)
       when kind in [:s, :u] and not is_struct(data, B) and tensor.vectorized_axes == [] do
    if Nx.size(tensor) in 1..@max_literal do
      tensor |> literal(device) |> value_of(device)
    else
      capture(tensor, device)
    end
  end

  defp value_of(%T{} = tensor, device), do: capture(tensor, device)

  defp literal(tensor, device) do
    scalar = %T{type: tensor.type, shape: {}, names: [], data: nil}

    tensor
    |> Nx.to_flat_list()
    |> Enum.map(&B.constant(scalar, &1, device: device))
    |> Nx.stack()
    |> Nx.reshape(tensor.shape)
  end

  defp capture(tensor, device) do
    tensor = Nx.devectorize(tensor, keep_names: false)
    ref = B.to_ref(tensor, device)
    state = Process.get(@key)

    case state.capture_ids do
      %{^ref => j} ->
        {:capture, j}

      %{} ->
        j = map_size(state.capture_ids)

        Process.put(@key, %{
          state
          | captures: [{ref, tensor.type, tensor.shape} | state.captures],
            capture_ids: Map.put(state.capture_ids, ref, j)
        })

        {:capture, j}
    end
  end

  defp update(fun), do: Process.put(@key, fun.(Process.get(@key)))

  # Each donated parameter (Nx.donatable/1) with the first output of its type and shape not
  # taken by an earlier one, as {input number, output position}; EXLA's errors where none is,
  # or where the function does not use the parameter.
  defp donations(templates, params_used, param_ids, output_specs) do
    templates
    |> Enum.with_index()
    |> Enum.filter(fn {t, _} -> Map.get(t, :donatable?, false) end)
    |> Enum.map_reduce(MapSet.new(), fn {t, i}, taken ->
      unless MapSet.member?(params_used, i) do
        raise ArgumentError,
              "argument marked for donation is not used by the computation; " <>
                "only used inputs can be donated"
      end

      spec = {t.type, t.shape}

      position =
        output_specs
        |> Enum.with_index()
        |> Enum.find_value(fn {s, j} -> s == spec and not MapSet.member?(taken, j) and j end)

      unless position do
        raise ArgumentError,
              "input marked for donation has no output with matching shape " <>
                "#{inspect(t.shape)} and type #{inspect(t.type)}; cannot alias this argument"
      end

      {{Map.fetch!(param_ids, i), position}, MapSet.put(taken, position)}
    end)
    |> elem(0)
  end

  # Numbers the values as the engine does (inputs first: the used params, then the captures;
  # then the nodes) and lists the result's leaves as outputs. With host steps, the program is
  # cut into segments instead (Nx.Vulkan.Compiler.Segments), which keep the raw values.
  defp finish(state, templates, result) do
    # Result leaves that are real tensors (a captured tensor returned as is) become captures.
    outputs =
      [result]
      |> Nx.Defn.Composite.flatten_list()
      |> Enum.map(&value_of(&1, state.device))

    state = Process.get(@key)
    params = Enum.sort(state.params_used)
    param_ids = params |> Enum.with_index() |> Map.new()
    captures = Enum.reverse(state.captures)
    nodes = Enum.reverse(state.nodes)
    steps = Enum.reverse(state.steps)
    p = length(params)
    c = length(captures)

    param_specs =
      Enum.map(params, fn i ->
        t = templates |> Enum.at(i) |> Nx.devectorize()
        {t.type, t.shape}
      end)

    input_specs = param_specs ++ Enum.map(captures, fn {_, type, shape} -> {type, shape} end)
    node_specs = nodes |> Enum.map(fn {_, type, shape, _, _} -> {type, shape} end)
    node_specs = List.to_tuple(node_specs)
    step_specs = steps |> Enum.map(&elem(&1, 4)) |> List.to_tuple()

    number = fn
      {:param, i} -> Map.fetch!(param_ids, i)
      {:capture, j} -> p + j
      {:node, k} -> p + c + k
    end

    spec_of = fn
      {:node, k} -> elem(node_specs, k)
      {:host, s, j} -> step_specs |> elem(s) |> Enum.at(j)
      value -> Enum.at(input_specs, number.(value))
    end

    recorded = %{
      params: params,
      donations: donations(templates, state.params_used, param_ids, Enum.map(outputs, spec_of)),
      captures: Enum.map(captures, fn {ref, _, _} -> ref end),
      result: result
    }

    if steps == [] do
      Map.merge(recorded, %{
        input_specs: input_specs,
        nodes:
          Enum.map(nodes, fn {id, type, shape, values, options} ->
            {id, type, shape, Enum.map(values, number), options}
          end),
        outputs: Enum.map(outputs, number)
      })
    else
      Map.merge(recorded, %{
        steps: Nx.Vulkan.Compiler.Segments.split(nodes, steps, outputs, spec_of),
        outputs: outputs
      })
    end
  end
end
