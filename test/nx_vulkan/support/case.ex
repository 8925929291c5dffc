defmodule Nx.Vulkan.Case do
  @moduledoc false
  # The case template of every test module: tests run on Nx.Vulkan.Backend with host fallbacks
  # refused (test_helper.exs sets :host_fallback to :raise unless NX_VULKAN_HOST_FALLBACK says
  # otherwise), so that a comparison with Nx.BinaryBackend never compares it with itself.
  #
  # A test that needs the host fallback opts in with a tag, saying why in a comment:
  #
  #     # The op below has no native kernel: the test is about the fallback itself.
  #     @tag fallback: :allow
  #     test "..." do
  #
  # (`@moduletag fallback: :allow` / `@describetag` for several; `:warn` and `:raise` work too).
  # The mode is set for the test's process (as Nx.Vulkan.with_host_fallback/2 does); in a module
  # that is not async, where no other test runs meanwhile, also as the application setting, for
  # the processes the test starts, and restored after the test.
  use ExUnit.CaseTemplate

  @modes [:allow, :warn, :raise]

  setup context do
    Nx.default_backend(Nx.Vulkan.Backend)

    case context[:fallback] do
      nil ->
        :ok

      mode when mode in @modes ->
        put_fallback(mode, context.async)

      other ->
        raise ArgumentError,
              "@tag fallback: must be one of #{inspect(@modes)}, got #{inspect(other)}"
    end
  end

  defp put_fallback(mode, async?) do
    Process.put(:nx_vulkan_host_fallback, mode)

    unless async? do
      previous = Application.fetch_env(:nx_vulkan, :host_fallback)
      Application.put_env(:nx_vulkan, :host_fallback, mode)

      on_exit(fn ->
        case previous do
          {:ok, value} -> Application.put_env(:nx_vulkan, :host_fallback, value)
          :error -> Application.delete_env(:nx_vulkan, :host_fallback)
        end
      end)
    end

    :ok
  end
end
