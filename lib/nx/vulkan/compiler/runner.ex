defmodule Nx.Vulkan.Compiler.Runner do
  @moduledoc false
  # Runs a compiled entry on a call's arguments (a list of functions returning tensors):
  #
  #   * `{:program, p}`: one engine program, one native call;
  #   * `{:steps, p}`: device segments (engine programs) and host steps in order, values
  #     passed between them as device buffers; values computed from constants alone when the
  #     function compiled are shared by every call (immutable: `constant: true` wherever they
  #     leave the step, so that no call donates them); where the steps are one counted loop
  #     kernel (`loop_plan/1`), one native call with the arguments found by position;
  #   * `{:eval, evaluator, device}`: the function through Nx.Defn.Evaluator on the backend.

  alias Nx.Defn.Composite
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B
  alias Nx.Vulkan.Compiler.HostSteps
  alias Nx.Vulkan.{Error, NIF}

  def run({:program, p}, args) do
    params = params(p, args)
    outputs = p.program |> NIF.program_run(params ++ p.captures) |> Error.unwrap!()
    give_up_donated(p, params, outputs)
    wrap(p.result, outputs, p.device)
  end

  def run({:steps, %{loop: loop} = p}, args) when is_map(loop) do
    params = params(p, args)
    given = List.to_tuple(params)

    refs =
      Enum.map(loop.sources, fn
        {:param, k} -> elem(given, k)
        {:ref, ref} -> ref
      end)

    returned = loop.program |> NIF.program_run(refs ++ loop.captures) |> Error.unwrap!()
    returned = List.to_tuple(returned)
    outputs = Enum.map(loop.outputs, &elem(returned, &1))
    give_up_donated(p, params, outputs)
    wrap(p.result, outputs, p.device, loop.constant)
  end

  def run({:steps, p}, args) do
    params = params(p, args)

    env =
      Map.merge(
        p.params |> Enum.map(&{:param, &1}) |> Enum.zip(params) |> Map.new(),
        p.captures |> Enum.with_index() |> Map.new(fn {ref, j} -> {{:capture, j}, ref} end)
      )

    # Captures are shared by every call too.
    env = shared(env, Enum.map(0..(length(p.captures) - 1)//1, &{:capture, &1}))
    env = Enum.reduce(p.steps, env, &run_step(&1, &2, p.device))
    outputs = Enum.map(p.outputs, &Map.fetch!(env, &1))
    give_up_donated(p, params, outputs)
    constants = Map.get(env, :constants, MapSet.new())
    wrap(p.result, outputs, p.device, Enum.map(p.outputs, &MapSet.member?(constants, &1)))
  end

  def run({:eval, evaluator, device}, args) do
    previous = Nx.default_backend({B, device: device})

    try do
      [result] = evaluator.([args])
      result
    after
      Nx.default_backend(previous)
    end
  end

  @doc """
  Whether `run_gated/3` can run `entry`: one engine program that donates nothing, on a device
  that gates runs (conditional rendering), with no host step.
  """
  def gateable?({:program, %{donated: [], program: program}}),
    do: NIF.program_gateable(program) == {:ok, true}

  def gateable?(_entry), do: false

  @doc """
  Runs a gateable entry (`gateable?/1`) whose kernels run only where `gate` (an s32 or u32
  scalar on the device) is nonzero when the GPU reaches them; else its results hold whatever
  their memory held. The host never reads the gate.
  """
  def run_gated({:program, p}, args, %T{data: %B{ref: gate}}) do
    p.program
    |> NIF.program_run(params(p, args) ++ p.captures, gate)
    |> Error.unwrap!()
    |> then(&wrap(p.result, &1, p.device))
  end

  @doc """
  The run of a steps entry that is one counted loop kernel (after values computed when it
  compiled), its inputs and outputs found once by position: `run/2` then makes one native
  call with no environment of values. `nil` for any other entry.
  """
  def loop_plan(%{steps: steps, params: param_ids, captures: captures, outputs: outputs}) do
    {constant_steps, rest} = Enum.split_while(steps, &match?({:constants, _, _}, &1))

    with [{:host, s, {{:loop_kernel, {:program, lp}}, _}, inputs, _templates, _specs}] <- rest,
         positions when is_list(positions) <- loop_outputs(outputs, s) do
      fixed =
        Map.merge(
          for(
            {:constants, values, refs} <- constant_steps,
            pair <- Enum.zip(values, refs),
            into: %{},
            do: pair
          ),
          captures |> Enum.with_index() |> Map.new(fn {ref, j} -> {{:capture, j}, ref} end)
        )

      param_position =
        param_ids |> Enum.with_index() |> Map.new(fn {id, k} -> {{:param, id}, k} end)

      sources =
        Enum.map(inputs, fn value ->
          case {Map.fetch(param_position, value), Map.fetch(fixed, value)} do
            {{:ok, k}, _} -> {:param, k}
            {:error, {:ok, ref}} -> {:ref, ref}
            _ -> nil
          end
        end)

      # As the steps' run marks them: a loop kernel returns state its body leaves unchanged in
      # the state's own buffer, so outputs of shared constants' state are shared constants.
      passed = sources |> Enum.map(&match?({:ref, _}, &1)) |> List.to_tuple()

      if Enum.all?(sources) do
        %{
          program: lp.program,
          captures: lp.captures,
          sources: sources,
          outputs: positions,
          constant: Enum.map(positions, &elem(passed, &1))
        }
      end
    else
      _ -> nil
    end
  end

  def loop_plan(_run), do: nil

  defp loop_outputs(outputs, s) do
    if Enum.all?(outputs, &match?({:host, ^s, _}, &1)), do: Enum.map(outputs, &elem(&1, 2))
  end

  defp run_step({:segment, program, inputs, outputs}, env, _device) do
    refs =
      program
      |> NIF.program_run(Enum.map(inputs, &Map.fetch!(env, &1)))
      |> Error.unwrap!()

    bind(env, outputs, refs)
  end

  defp run_step({:constants, outputs, refs}, env, _device) do
    env |> bind(outputs, refs) |> shared(outputs)
  end

  # A counted loop in one launch: its entry's program runs on the state's buffers as they are
  # (its parameters are the state, in order, and it donates none).
  defp run_step(
         {:host, s, {{:loop_kernel, {:program, p}}, _} = action, inputs, _templates, specs},
         env,
         _device
       ) do
    refs =
      p.program
      |> NIF.program_run(Enum.map(inputs, &Map.fetch!(env, &1)) ++ p.captures)
      |> Error.unwrap!()

    outputs = Enum.map(0..(length(specs) - 1)//1, &{:host, s, &1})
    constants = Map.get(env, :constants, MapSet.new())
    env |> bind(outputs, refs) |> shared(passed_through(action, inputs, outputs, constants))
  end

  defp run_step({:host, s, action, inputs, templates, specs}, env, device) do
    constants = Map.get(env, :constants, MapSet.new())

    tensors =
      Enum.zip_with(inputs, templates, fn value, template ->
        data = %B{ref: Map.fetch!(env, value), device: device, constant: value in constants}
        %{template | data: data}
      end)

    results = HostSteps.run(action, tensors, device)

    refs =
      Enum.zip_with(results, specs, fn %T{} = t, {type, shape} ->
        if t.type != type or t.shape != shape do
          raise ArgumentError,
                "a host step returned a tensor of type #{inspect(t.type)} and shape " <>
                  "#{inspect(t.shape)} where #{inspect(type)} and #{inspect(shape)} were expected"
        end

        t |> Nx.devectorize(keep_names: false) |> B.to_ref(device)
      end)

    outputs = Enum.map(0..(length(specs) - 1)//1, &{:host, s, &1})
    env |> bind(outputs, refs) |> shared(passed_through(action, inputs, outputs, constants))
  end

  # Values that may be a shared constant's buffer.
  defp shared(env, values),
    do: Map.update(env, :constants, MapSet.new(values), &Enum.into(values, &1))

  # A loop kernel returns state its body leaves unchanged in the state's own buffer.
  defp passed_through({{kind, _}, _}, inputs, outputs, constants)
       when kind in [:loop_kernel, :loop_kernel_until] do
    for {input, output} <- Enum.zip(inputs, outputs), input in constants, do: output
  end

  # A loop of no trips returns its state as it is.
  defp passed_through({{:repeat, {0, _}}, _}, inputs, outputs, constants) do
    for {input, output} <- Enum.zip(inputs, outputs), input in constants, do: output
  end

  defp passed_through(_action, _inputs, _outputs, _constants), do: []

  defp bind(env, values, refs) do
    values |> Enum.zip(refs) |> Enum.into(env)
  end

  defp params(p, args) do
    args = List.to_tuple(args)

    p.params
    |> Enum.with_index()
    |> Enum.map(fn {param, i} -> param_ref(elem(args, param).(), i in p.donated, p.device) end)
  end

  # A shared constant is never given up: the program gets a copy to write over.
  defp param_ref(%T{data: %B{constant: true, ref: ref}}, true = _donated, device),
    do: ref |> NIF.copy(device) |> Error.unwrap!()

  defp param_ref(tensor, _donated, device), do: input_ref(tensor, device)

  # A donated argument is given up: its buffer may now hold an output.
  defp give_up_donated(p, params, outputs) do
    for i <- p.donated, ref = Enum.at(params, i), ref not in outputs, do: NIF.deallocate(ref)
  end

  defp wrap(result, outputs, device, constant \\ nil) do
    constant = constant || List.duplicate(false, length(outputs))

    {result, {[], []}} =
      Composite.traverse(result, {outputs, constant}, fn t, {[ref | refs], [c | cs]} ->
        {%{t | data: %B{ref: ref, device: device, constant: c}}, {refs, cs}}
      end)

    result
  end

  defp input_ref(%T{data: %Nx.Defn.Expr{}} = tensor, _device) do
    raise ArgumentError,
          "cannot pass a tensor expression as argument to defn, got: #{inspect(tensor)}"
  end

  defp input_ref(%T{} = tensor, device),
    do: tensor |> Nx.devectorize(keep_names: false) |> B.to_ref(device)
end
