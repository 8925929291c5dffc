# The whole suite runs on Nx.Vulkan.Backend, with Nx's doctests in mind: inspected tensors
# must look like Nx.BinaryBackend's (no backend line).
Nx.global_default_backend(Nx.Vulkan.Backend)
Application.put_env(:nx, :add_backend_on_inspect, false)

# NX_VULKAN_HOST_FALLBACK=allow|warn|raise picks the host-fallback setting for the run
# (default :allow here: the suite counts fallbacks instead of warning about each op once).
fallback = System.get_env("NX_VULKAN_HOST_FALLBACK", "allow") |> String.to_existing_atom()
Application.put_env(:nx_vulkan, :host_fallback, fallback)

exclude = if System.get_env("NX_VULKAN_SKIP_LARGE") in ["1", "true"], do: [:large], else: []
ExUnit.start(exclude: exclude, timeout: 600_000)
