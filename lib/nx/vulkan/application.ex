defmodule Nx.Vulkan.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    Supervisor.start_link([Nx.Vulkan.Tables], strategy: :one_for_one, name: Nx.Vulkan.Supervisor)
  end

  # Pipelines created since the last background save reach the disk cache (devices never
  # opened are not opened for this).
  @impl true
  def prep_stop(state) do
    with {:ok, devices} <- Nx.Vulkan.NIF.devices() do
      Enum.each(devices, &Nx.Vulkan.NIF.save_pipeline_cache(&1.index))
    end

    state
  rescue
    _ -> state
  end
end

defmodule Nx.Vulkan.Tables do
  @moduledoc false
  # Owns the package's ETS tables: host-fallback counters and warnings, the cache of the
  # engine's answers to "is this op native for these types on this device?", and the traced
  # functions of reduce/5 and window_reduce/6 (Nx.Vulkan.Combiner), the compiled defn
  # functions and programs of Nx.Vulkan.Compiler, and the small constants on each device
  # (Nx.Vulkan.Backend.constant/3).
  use GenServer

  @fallbacks :nx_vulkan_fallbacks
  @support :nx_vulkan_support
  @combiners :nx_vulkan_combiners
  @compiled :nx_vulkan_compiled
  @constants :nx_vulkan_constants

  def fallbacks, do: @fallbacks
  def support, do: @support
  def combiners, do: @combiners
  def compiled, do: @compiled
  def constants, do: @constants

  def start_link(_), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)

  @doc """
  Runs `fun`, which reads or writes the tables. When they do not exist because the
  application was never started (a script, a release or a stale build whose `.app` leaves
  `:nx_vulkan` out), starts it and runs `fun` again, or raises saying what to do.
  """
  def with_tables(fun) do
    fun.()
  rescue
    error in ArgumentError ->
      if :ets.whereis(@support) != :undefined, do: reraise(error, __STACKTRACE__)
      start_application!()
      fun.()
  end

  defp start_application! do
    case Application.ensure_all_started(:nx_vulkan) do
      {:ok, _} ->
        :ok

      {:error, reason} ->
        raise Nx.Vulkan.Error,
          kind: :not_started,
          message:
            "the :nx_vulkan application is not running and could not be started " <>
              "(#{inspect(reason)}): list :nx_vulkan in your project's dependencies (or " <>
              "extra_applications), or call Application.ensure_all_started(:nx_vulkan) " <>
              "before using Nx.Vulkan.Backend"
    end
  end

  @impl true
  def init([]) do
    :ets.new(@fallbacks, [:named_table, :public, :set, write_concurrency: true])
    :ets.new(@support, [:named_table, :public, :set, read_concurrency: true])
    :ets.new(@combiners, [:named_table, :public, :set, read_concurrency: true])
    :ets.new(@compiled, [:named_table, :public, :set, read_concurrency: true])
    :ets.new(@constants, [:named_table, :public, :set, read_concurrency: true])
    {:ok, nil}
  end
end
