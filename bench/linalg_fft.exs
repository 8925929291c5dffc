# fft and triangular_solve from Elixir: Nx.Vulkan.Backend against Nx.BinaryBackend (mix run bench/linalg_fft.exs).
defmodule B do
  def time(fun, reps) do
    fun.()
    {us, _} = :timer.tc(fn -> for _ <- 1..reps, do: fun.() end)
    us / reps / 1000
  end
end

key = Nx.Random.key(1)
{x, key} = Nx.Random.normal(key, shape: {64, 256}, type: :f32)
{long, key} = Nx.Random.normal(key, shape: {4, 65536}, type: :f32)
{a, key} = Nx.Random.uniform(key, shape: {128, 128}, type: :f32)
a = Nx.add(Nx.tril(a), Nx.multiply(Nx.eye(128), 2))
{b, _} = Nx.Random.normal(key, shape: {128, 32}, type: :f32)

for {name, backend} <- [vulkan: Nx.Vulkan.Backend, binary: Nx.BinaryBackend] do
  xb = Nx.backend_transfer(x, backend)
  lb = Nx.backend_transfer(long, backend)
  ab = Nx.backend_transfer(a, backend)
  bb = Nx.backend_transfer(b, backend)
  reps = if name == :binary, do: 1, else: 20
  fft = B.time(fn -> Nx.fft(xb) |> Nx.to_binary() end, reps)
  fft_long = B.time(fn -> Nx.fft(lb) |> Nx.to_binary() end, reps)
  ts = B.time(fn -> Nx.LinAlg.triangular_solve(ab, bb) |> Nx.to_binary() end, reps)

  IO.puts(
    "#{name}: fft c64 64x256 #{Float.round(fft, 2)} ms, 4x65536 #{Float.round(fft_long, 1)} ms, " <>
      "triangular_solve 128x128 with 32 rhs #{Float.round(ts, 2)} ms"
  )
end

# jax_ops.py's fft shape (c64 1024 x 4096 along axis 1), Nx.Vulkan.Backend only: 20 transforms
# queued, then one small read (waits for all of them); the time per transform.
{sig, _} = Nx.Random.normal(Nx.Random.key(2), shape: {1024, 4096}, type: :f32)
sig = sig |> Nx.as_type(:c64) |> Nx.backend_transfer(Nx.Vulkan.Backend)
wait = fn y -> y |> Nx.slice([0, 0], [1, 1]) |> Nx.to_binary() end
wait.(Nx.fft(sig))
{us, _} = :timer.tc(fn -> for(_ <- 1..20, do: Nx.fft(sig)) |> List.last() |> wait.() end)
ms = us / 20 / 1000

IO.puts(
  "vulkan: fft c64 1024x4096 along axis 1 #{Float.round(ms, 3)} ms, #{round(16 * 1024 * 4096 / (ms / 1000) / 1.0e9)} GB/s"
)
