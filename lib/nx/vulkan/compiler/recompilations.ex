defmodule Nx.Vulkan.Compiler.Recompilations do
  @moduledoc false
  # Counts compilations per function (its code, not the closure) and warns, at the 4th, 8th,
  # 16th..., naming what changed since the one before: each new template or closure traces,
  # lowers and compiles again (with `cache: false` every call does, as asked).

  require Logger
  alias Nx.Vulkan.Tables

  @recompile_warning 4

  @doc """
  Counts a compilation of `key` with argument keys `args` (Nx.Vulkan.Compiler's `arg_key/1`
  of each tensor: type, shape, names, vectorized axes, donatable) and settings.
  """
  def note(_key, _args, %{cache: false}), do: :ok

  def note(key, args, settings) do
    id = {:compilations, function_id(key)}

    previous =
      Tables.with_tables(fn ->
        case :ets.lookup(Tables.compiled(), id) do
          [{_, count, last}] -> {count, last}
          [] -> {0, nil}
        end
      end)

    {count, last} = previous
    count = count + 1
    Tables.with_tables(fn -> :ets.insert(Tables.compiled(), {id, count, {args, settings}}) end)

    if last && count >= @recompile_warning && Bitwise.band(count, count - 1) == 0 do
      Logger.warning(
        "Nx.Vulkan.Compiler has compiled #{describe_function(key)} #{count} times; since the " <>
          "previous compilation #{what_changed(last, {args, settings})}. Each new argument " <>
          "template or closure traces and compiles the function again: keep shapes and types " <>
          "fixed (pad batches, or use Nx.Serving), and build a jitted function once"
      )
    end
  end

  defp function_id(fun) when is_function(fun) do
    info = Function.info(fun)
    {info[:module], info[:name], info[:arity]}
  end

  defp function_id(key), do: key

  defp describe_function(fun) when is_function(fun) do
    {module, name, arity} = function_id(fun)
    "#{inspect(module)}.#{name}/#{arity}"
  end

  defp describe_function(key), do: inspect(key)

  @arg_fields [:type, :shape, :names, :vectorized_axes, :donatable]

  defp what_changed({args, settings}, {args, settings}),
    do: "only the closure changed (a new function value, with other captured values)"

  defp what_changed({old, _}, {new, _}) when length(old) != length(new),
    do: "the arguments changed from #{length(old)} to #{length(new)} tensors"

  defp what_changed({args, old}, {args, new}),
    do: "its options changed from #{inspect(old)} to #{inspect(new)}"

  defp what_changed({old, _}, {new, _}) do
    {{was, now}, i} =
      old |> Enum.zip(new) |> Enum.with_index() |> Enum.find(fn {{a, b}, _} -> a != b end)

    {field, from, to} =
      @arg_fields
      |> Enum.zip(Enum.zip(Tuple.to_list(was), Tuple.to_list(now)))
      |> Enum.find_value(fn {field, {a, b}} -> a != b && {field, a, b} end)

    "argument tensor #{i} changed its #{field} from #{inspect(from)} to #{inspect(to)}"
  end
end
