defmodule Nx.Vulkan.Application do
  @moduledoc false
  use Application

  @impl true
  def start(_type, _args) do
    Supervisor.start_link([Nx.Vulkan.Tables], strategy: :one_for_one, name: Nx.Vulkan.Supervisor)
  end
end

defmodule Nx.Vulkan.Tables do
  @moduledoc false
  # Owns the package's ETS tables: host-fallback counters and warnings, and the cache of
  # the engine's answers to "is this op native for these types on this device?".
  use GenServer

  @fallbacks :nx_vulkan_fallbacks
  @support :nx_vulkan_support

  def fallbacks, do: @fallbacks
  def support, do: @support

  def start_link(_), do: GenServer.start_link(__MODULE__, [], name: __MODULE__)

  @impl true
  def init([]) do
    :ets.new(@fallbacks, [:named_table, :public, :set, write_concurrency: true])
    :ets.new(@support, [:named_table, :public, :set, read_concurrency: true])
    {:ok, nil}
  end
end
