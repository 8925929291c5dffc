# Nx.dot on Nx.Vulkan.Backend from Elixir against numpy's `a @ b` on the same machine, measured
# in one command and interleaved (rounds of a few Vulkan calls, then a few numpy calls), since
# the machine may be shared. The Vulkan time is the Nx call, the NIF, recording, the device's
# work and the download of the result (Nx.to_binary), so the product is really computed. Run
# with
#
#     mix run bench/dot_vs_numpy.exs [rounds] [--per-round n] [--binary]
#
# (NX_PATH etc. as for the Elixir suite; NXV_PYTHON names the python3 whose numpy to use,
# /usr/bin/python3 by default: Debian's python3-numpy with libopenblas0-pthread). Prints, per
# shape and type, the first Vulkan call (the kernel's compile included unless the kernel cache
# holds it), the medians of both and their ratio, and the load average before and after.
# --binary also times Nx.BinaryBackend once on 512x512x512 f32 (over a minute).
{opts, args} = OptionParser.parse!(System.argv(), strict: [binary: :boolean, per_round: :integer])
rounds = args |> List.first("7") |> String.to_integer()
# One round of 30 calls each (`1 --per-round 30`) times each side back to back: interleaved, each
# side's OpenBLAS threads spin after its calls and slow the other's on a small machine.
per_round = Keyword.get(opts, :per_round, 3)

python = System.get_env("NXV_PYTHON", "/usr/bin/python3")
script = Path.join(__DIR__, "dot_numpy.py")
port = Port.open({:spawn_executable, python}, [:binary, {:line, 1_000_000}, args: [script]])

read_line = fn ->
  receive do
    {^port, {:data, {:eol, line}}} -> line
  after
    120_000 -> raise "no answer from #{python} #{script}"
  end
end

numpy_version = read_line.()
load = fn -> File.read!("/proc/loadavg") |> String.split() |> Enum.take(3) |> Enum.join(" ") end

:rand.seed(:exsss, {1, 2, 3})

random = fn shape, type ->
  n = Tuple.product(shape)

  data =
    case type do
      {:f, size} ->
        for _ <- 1..n, into: <<>>, do: <<:rand.uniform()::float-size(size)-native>>

      {:s, size} ->
        for _ <- 1..n, into: <<>>, do: <<:rand.uniform(16) - 8::signed-size(size)-native>>
    end

  Nx.from_binary(data, type, backend: Nx.Vulkan.Backend) |> Nx.reshape(shape)
end

numpy_type = fn
  {:f, 32} -> "float32"
  {:f, 64} -> "float64"
  {:s, 32} -> "int32"
end

median = fn list -> list |> Enum.sort() |> Enum.at(div(length(list), 2)) end
dims = fn shape -> shape |> Tuple.to_list() |> Enum.join(",") end

# {left shape, right shape, type}; Nx.dot contracts the last axis of the left with the first
# (or only) axis of the right, as numpy's @ does for these.
cases = [
  {{512, 512}, {512, 512}, {:f, 32}},
  {{512, 512}, {512, 512}, {:f, 64}},
  {{512, 512}, {512, 512}, {:s, 32}},
  {{511, 511}, {511, 511}, {:f, 32}},
  {{256, 784}, {784, 1024}, {:f, 32}},
  {{512, 512}, {512}, {:f, 32}},
  {{1, 512}, {512, 512}, {:f, 32}},
  {{64, 64}, {64, 64}, {:f, 32}},
  {{16, 16}, {16, 16}, {:f, 32}}
]

IO.puts(
  "device: #{inspect(Nx.Vulkan.device_info().name)}; #{numpy_version} (#{python}); " <>
    "#{rounds} rounds of #{per_round} calls each; load before: #{load.()}"
)

for {sa, sb, type} <- cases do
  a = random.(sa, type)
  b = random.(sb, type)
  vulkan = fn -> Nx.dot(a, b) |> Nx.to_binary() end
  {first, _} = :timer.tc(vulkan)

  {ours, theirs} =
    Enum.reduce(1..rounds, {[], []}, fn _, {ours, theirs} ->
      ours = ours ++ for(_ <- 1..per_round, do: vulkan |> :timer.tc() |> elem(0))
      Port.command(port, "#{dims.(sa)} #{dims.(sb)} #{numpy_type.(type)} #{per_round}\n")
      times = read_line.() |> String.split() |> Enum.map(&String.to_float/1)
      {ours, theirs ++ times}
    end)

  {o, t} = {median.(ours) / 1000, median.(theirs) / 1000}

  IO.puts(
    "#{inspect(sa)} . #{inspect(sb)} #{Nx.Type.to_string(type)}: Nx.Vulkan.Backend #{Float.round(o, 3)} ms " <>
      "(first #{Float.round(first / 1000, 1)} ms, min #{Float.round(Enum.min(ours) / 1000, 3)}), " <>
      "numpy #{Float.round(t, 3)} ms (min #{Float.round(Enum.min(theirs) / 1000, 3)}), ratio #{Float.round(o / t, 2)}x"
  )
end

if opts[:binary] do
  a = random.({512, 512}, {:f, 32}) |> Nx.backend_transfer(Nx.BinaryBackend)
  b = random.({512, 512}, {:f, 32}) |> Nx.backend_transfer(Nx.BinaryBackend)
  {us, _} = :timer.tc(fn -> Nx.dot(a, b) end)
  IO.puts("{512, 512} . {512, 512} f32: Nx.BinaryBackend #{Float.round(us / 1.0e6, 1)} s")
end

IO.puts("load after: #{load.()}")
Port.close(port)
