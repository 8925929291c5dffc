# The whole suite runs on Nx.Vulkan.Backend, with Nx's doctests in mind: inspected tensors
# must look like Nx.BinaryBackend's (no backend line).
Nx.global_default_backend(Nx.Vulkan.Backend)
Application.put_env(:nx, :add_backend_on_inspect, false)

# Host fallbacks are refused (:raise): a comparison with Nx.BinaryBackend must never compare it
# with itself. A test that needs the fallback opts in with `@tag fallback: :allow`, handled by
# Nx.Vulkan.Case (test/nx_vulkan/support/case.ex). NX_VULKAN_HOST_FALLBACK=allow|warn|raise
# picks another setting for the whole run.
fallback = System.get_env("NX_VULKAN_HOST_FALLBACK", "raise") |> String.to_existing_atom()
Application.put_env(:nx_vulkan, :host_fallback, fallback)

# A device wait that never ends raises, naming the stream's batches, instead of hanging the run
# (NX_VULKAN_WAIT_LIMIT_S, read by the engine at each wait).
if System.get_env("NX_VULKAN_WAIT_LIMIT_S") in [nil, ""],
  do: System.put_env("NX_VULKAN_WAIT_LIMIT_S", "600")

# Tests tagged :validation assert that the Khronos validation layer reported nothing: without
# NX_VULKAN_VALIDATION (read as the engine reads it: set, and not "0" or "false") they would pass
# without checking anything, so they are excluded (and counted as excluded).
validation? = System.get_env("NX_VULKAN_VALIDATION") not in [nil, "", "0", "false"]

exclude =
  if(System.get_env("NX_VULKAN_SKIP_LARGE") in ["1", "true"], do: [:large], else: []) ++
    if validation?, do: [], else: [:validation]

ExUnit.start(exclude: exclude, timeout: 600_000)

# Vulkan validation (NX_VULKAN_VALIDATION=1): any message fails the run.
ExUnit.after_suite(fn _results ->
  case Nx.Vulkan.validation() do
    %{enabled: true, count: count, messages: messages} when count > 0 ->
      IO.puts(:stderr, "\n#{count} Vulkan validation message(s); the most recent:")
      Enum.each(messages, &IO.puts(:stderr, "  " <> &1))
      System.at_exit(fn _ -> exit({:shutdown, 1}) end)

    %{enabled: enabled} ->
      IO.puts("Vulkan validation layer: #{if enabled, do: "on, no messages", else: "off"}")
  end
end)
