defmodule Nx.Vulkan.Fallback do
  @moduledoc false
  # Host fallbacks made visible: a counter per op, a telemetry event, a one-time warning per
  # op, or a raise, according to the `:host_fallback` setting.

  require Logger
  alias Nx.Vulkan.Tables

  @modes [:allow, :warn, :raise]

  @doc "The current setting: the process override, else the application env (default :warn)."
  def mode do
    mode =
      Process.get(:nx_vulkan_host_fallback) ||
        Application.get_env(:nx_vulkan, :host_fallback, :warn)

    if mode in @modes do
      mode
    else
      raise ArgumentError,
            "the :host_fallback setting of :nx_vulkan must be one of #{inspect(@modes)}, " <>
              "got: #{inspect(mode)}"
    end
  end

  def modes, do: @modes

  @doc """
  Records that `op` runs on the host, or raises when fallbacks are not allowed.
  `reason` says why it cannot run natively (shown in warnings and errors).
  """
  def record!(op, reason) do
    case mode() do
      :raise ->
        raise Nx.Vulkan.Error,
          kind: :unsupported,
          message:
            "Nx.Vulkan.Backend cannot run #{op} natively (#{reason}) and the host fallback " <>
              "is disabled (config :nx_vulkan, host_fallback: :raise)"

      :warn ->
        count(op)

        if Tables.with_tables(fn ->
             :ets.insert_new(Tables.fallbacks(), {{:warned, op}, true})
           end) do
          Logger.warning(
            "Nx.Vulkan.Backend: #{op} runs on the host through Nx.BinaryBackend (#{reason}). " <>
              "This warning is shown once per op; set config :nx_vulkan, host_fallback: :allow " <>
              "to silence it or :raise to forbid fallbacks"
          )
        end

      :allow ->
        count(op)
    end

    :ok
  end

  defp count(op) do
    Tables.with_tables(fn ->
      :ets.update_counter(Tables.fallbacks(), {:count, op}, 1, {{:count, op}, 0})
    end)

    :telemetry.execute([:nx_vulkan, :host_fallback], %{count: 1}, %{op: op})
  end

  @doc "Fallback counts per op since start (or the last reset)."
  def counts do
    Tables.with_tables(fn -> :ets.match(Tables.fallbacks(), {{:count, :"$1"}, :"$2"}) end)
    |> Map.new(fn [op, n] -> {op, n} end)
  end

  @doc "Clears the counters and the once-per-op warnings."
  def reset do
    Tables.with_tables(fn -> :ets.delete_all_objects(Tables.fallbacks()) end)
    :ok
  end
end
