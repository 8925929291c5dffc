defmodule Nx.Vulkan.Compiler.Runner do
  @moduledoc false
  # Runs a compiled entry on a call's arguments (a list of functions returning tensors):
  #
  #   * `{:program, p}`: one engine program, one native call;
  #   * `{:steps, p}`: device segments (engine programs) and host steps in order, values
  #     passed between them as device buffers;
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

  def run({:steps, p}, args) do
    params = params(p, args)

    env =
      Map.merge(
        p.params |> Enum.map(&{:param, &1}) |> Enum.zip(params) |> Map.new(),
        p.captures |> Enum.with_index() |> Map.new(fn {ref, j} -> {{:capture, j}, ref} end)
      )

    env = Enum.reduce(p.steps, env, &run_step(&1, &2, p.device))
    outputs = Enum.map(p.outputs, &Map.fetch!(env, &1))
    give_up_donated(p, params, outputs)
    wrap(p.result, outputs, p.device)
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

  defp run_step({:segment, program, inputs, outputs}, env, _device) do
    refs =
      program
      |> NIF.program_run(Enum.map(inputs, &Map.fetch!(env, &1)))
      |> Error.unwrap!()

    bind(env, outputs, refs)
  end

  defp run_step({:host, s, action, inputs, templates, specs}, env, device) do
    tensors =
      Enum.zip_with(inputs, templates, fn value, template ->
        %{template | data: %B{ref: Map.fetch!(env, value), device: device}}
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

    bind(env, Enum.map(0..(length(specs) - 1)//1, &{:host, s, &1}), refs)
  end

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

  defp wrap(result, outputs, device) do
    {result, []} =
      Composite.traverse(result, outputs, fn t, [ref | refs] ->
        {%{t | data: %B{ref: ref, device: device}}, refs}
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
