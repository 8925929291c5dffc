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
