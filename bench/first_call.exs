# The first call of an op from Elixir, end to end, against a cold kernel cache: the Nx call, the
# NIF, compiling the kernel (GLSL -> SPIR-V), the driver's pipeline creation, the dispatch and
# the wait, less the same call once warm. Run with
#
#     NX_VULKAN_CACHE_DIR=off MESA_SHADER_CACHE_DISABLE=true mix run bench/first_call.exs
#
# (NX_PATH etc. as for the Elixir suite; __GL_SHADER_DISK_CACHE=0 for NVIDIA's driver cache).
# The device is opened and used once (a copy) before the timed calls, so that they do not pay
# its start-up.
x = Nx.iota({4096}, type: :f32, backend: Nx.Vulkan.Backend)
_ = Nx.add(Nx.tensor(1, backend: Nx.Vulkan.Backend), 1) |> Nx.to_number()

timed = fn fun ->
  {us, _} = :timer.tc(fn -> fun.() && Nx.Vulkan.synchronize() end)
  us / 1000
end

IO.puts("device: #{inspect(Nx.Vulkan.device_info().name)}")

for {name, fun} <- [
      sin: fn -> Nx.sin(x) end,
      exp: fn -> Nx.exp(x) end,
      multiply: fn -> Nx.multiply(x, x) end,
      pow: fn -> Nx.pow(x, x) end,
      as_type: fn -> Nx.as_type(x, :s32) end
    ] do
  first = timed.(fun)
  warm = timed.(fun)
  IO.puts("#{name} f32[4096]: first call #{Float.round(first, 1)} ms, warm #{Float.round(warm, 2)} ms")
end
