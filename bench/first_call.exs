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

# Wall time, and the process's CPU time over the same call (:erlang.statistics(:runtime), in
# ms: every thread of the OS process, lavapipe's own included). On a loaded machine the CPU
# time is the steadier figure; run with ERL_FLAGS="+sbwt none +sbwtdcpu none +sbwtdio none"
# so that idle schedulers do not spin into it.
timed = fn fun ->
  {c0, _} = :erlang.statistics(:runtime)
  {us, _} = :timer.tc(fn -> fun.() && Nx.Vulkan.synchronize() end)
  {c1, _} = :erlang.statistics(:runtime)
  {us / 1000, c1 - c0}
end

IO.puts("device: #{inspect(Nx.Vulkan.device_info().name)}")

for {name, fun} <- [
      sin: fn -> Nx.sin(x) end,
      exp: fn -> Nx.exp(x) end,
      multiply: fn -> Nx.multiply(x, x) end,
      pow: fn -> Nx.pow(x, x) end,
      as_type: fn -> Nx.as_type(x, :s32) end
    ] do
  {first, first_cpu} = timed.(fun)
  {warm, _} = timed.(fun)

  IO.puts(
    "#{name} f32[4096]: first call #{Float.round(first, 1)} ms (CPU #{first_cpu} ms), warm #{Float.round(warm, 2)} ms"
  )
end
