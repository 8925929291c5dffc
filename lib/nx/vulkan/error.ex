defmodule Nx.Vulkan.Error do
  @moduledoc """
  Raised for device-side failures.

  `:kind` is one of `:unsupported` (a valid request that the device or the engine cannot
  serve; the message says what is missing), `:out_of_memory`, `:deallocated` (a tensor used
  after `Nx.backend_deallocate/1`), `:not_started` (the `:nx_vulkan` application is not running
  and could not be started), `:device_lost` (the driver lost the device: its tensors are gone;
  `Nx.Vulkan.reopen_device/1` opens it again) and `:driver` (any other Vulkan failure: a failed
  submission, or reading a tensor whose computation was lost with one). Caller mistakes
  (`:invalid_argument`) raise `ArgumentError` instead.
  """
  defexception [:kind, :message]

  @impl true
  def exception(opts) do
    kind = Keyword.get(opts, :kind, :driver)
    message = Keyword.get(opts, :message, "Vulkan error")
    %__MODULE__{kind: kind, message: message}
  end

  @doc false
  # Unwraps a NIF result: the value, or a raise.
  def unwrap!({:ok, value}), do: value
  def unwrap!(:ok), do: :ok
  def unwrap!({:error, kind, message}), do: raise_error!(kind, message)

  @doc false
  def raise_error!(:invalid_argument, message), do: raise(ArgumentError, message)
  def raise_error!(kind, message), do: raise(__MODULE__, kind: kind, message: message)
end
