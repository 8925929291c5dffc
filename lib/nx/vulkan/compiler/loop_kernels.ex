defmodule Nx.Vulkan.Compiler.LoopKernels do
  @moduledoc false
  # `while` loops in the engine's loop kernel (engine/src/ops/loop): every trip of a loop in
  # one launch of one workgroup (one per chain of a vectorized state), a fixed trip count or,
  # for a data-dependent loop, up to @until_trips trips a launch until its condition fails. The
  # body is recorded on its own (`record.(exprs, combine)`, Nx.Vulkan.Compiler's recording of a
  # scope), with every part of the state an input (the state's first inputs, then the tensors
  # the body captures). Each function returns `{:ok, entry}` (a compiled program entry taking
  # the state), or `:none` with the reason kept for the compilation's telemetry event.

  alias Nx.Defn.Composite
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.{Error, NIF}

  # Loops of fewer trips are unrolled even where the engine's loop kernel would take them.
  @counted_trips 8
  # Trips of a data-dependent loop in one launch, at most this many each.
  @until_trips 1024
  # Why loops were recorded trip by trip rather than by the loop kernel (`:loop_kernel_refusals`).
  @refusals {__MODULE__, :refusals}

  @doc "A loop of `trips` trips: its body's result is the next state."
  def counted(_record, _arg, _body, _trips, %{loop_kernel: false}), do: :none
  # Fewer trips record as well unrolled, in the program around the loop.
  def counted(_record, _arg, _body, trips, _settings) when trips < @counted_trips, do: :none

  def counted(record, arg, body, trips, settings) do
    compile(record, arg, [body], fn [b], params -> b.(params) end, trips, 0, settings)
  end

  @doc """
  A loop whose trips are known only by running it: each trip first computes the condition on
  the state (the recorded body's last output) and ends the loop where it is zero; the entry
  also returns whether the loop ended, which the host reads once per launch.
  """
  def until(_record, _arg, _body, _condition, %{loop_kernel: false}), do: :none

  def until(record, arg, body, condition, settings) do
    combine = fn [b, c], params -> List.to_tuple(leaves(b.(params)) ++ [c.(params)]) end
    compile(record, arg, [body, condition], combine, @until_trips, 1, settings)
  end

  @doc "Clears the refusals kept so far (a compilation starts), returning them."
  def take_refusals, do: Process.delete(@refusals)

  @doc "The refusals kept since `take_refusals/0`, oldest first."
  def refusals, do: Enum.reverse(Process.get(@refusals, []))

  @doc "Puts back what `take_refusals/0` returned (a compilation ends)."
  def restore_refusals(nil), do: Process.delete(@refusals)
  def restore_refusals(refusals), do: Process.put(@refusals, refusals)

  defp compile(record, arg, exprs, combine, trips, conditional, settings) do
    state = length(leaves(arg))

    recorded =
      record.(exprs, fn evaluate, params ->
        Enum.each(params, & &1.())
        combine.(evaluate, params)
      end)

    with {:ok, %{nodes: nodes, donations: []} = recorded} <- recorded,
         true <- recorded.params == Enum.to_list(0..(state - 1)//1),
         {:ok, vectorized} <- vectorized_state(arg),
         {:ok, {program, _stats}} <-
           NIF.program_compile_loop(
             settings.device,
             recorded.input_specs,
             nodes,
             recorded.outputs,
             state,
             trips,
             vectorized,
             conditional
           ) do
      run = Map.take(recorded, [:params, :captures, :result])
      {:ok, {:program, Map.merge(run, %{program: program, device: settings.device, donated: []})}}
    else
      {:error, kind, message} when kind not in [:unsupported, :invalid_argument] ->
        Error.raise_error!(kind, message)

      {:error, _kind, message} ->
        refuse(message)

      {:ok, %{steps: _}} ->
        refuse("its body runs host steps")

      {:stop, reason} ->
        refuse(reason)

      _ ->
        refuse("its body donates or leaves part of its state unread")
    end
  end

  # The state's vectorized parts (one vectorized axis, devectorized to axis 0): the loop
  # kernel's chains, one workgroup each.
  defp vectorized_state(arg) do
    arg
    |> leaves()
    |> Enum.with_index()
    |> Enum.reduce_while({:ok, []}, fn
      {%T{vectorized_axes: []}, _}, acc -> {:cont, acc}
      {%T{vectorized_axes: [_]}, i}, {:ok, list} -> {:cont, {:ok, [i | list]}}
      _, _ -> {:halt, {:error, :unsupported, "a state vectorized on more than one axis"}}
    end)
  end

  defp refuse(reason) do
    Process.put(@refusals, [reason | Process.get(@refusals, [])])
    :none
  end

  defp leaves(state), do: state |> List.wrap() |> Composite.flatten_list()
end
