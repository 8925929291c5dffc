defmodule Nx.Vulkan.NotebookTest do
  # The notebooks run end to end as scripts, their Mix.install cell left out (the suite's own
  # dependencies stand in for it). Not async: a notebook sets the process's default backend
  # and defn options.
  use ExUnit.Case, async: false

  @notebook Path.expand("../../notebooks/getting_started.livemd", __DIR__)

  defp cells(path) do
    ~r/```elixir\n(.*?)```/s
    |> Regex.scan(File.read!(path), capture: :all_but_first)
    |> Enum.map(&hd/1)
    |> Enum.reject(&String.contains?(&1, "Mix.install"))
  end

  test "getting_started.livemd lists the devices, agrees with BinaryBackend and trains" do
    previous = {Nx.default_backend(), Nx.Defn.default_options()}

    try do
      {_, binding} = Code.eval_string(Enum.join(cells(@notebook), "\n"), [], file: @notebook)
      assert [%{index: 0} | _] = Nx.Vulkan.devices()
      assert binding[:max_difference] < 1.0e-6
      losses = binding[:losses]
      assert length(losses) == 100
      assert List.last(losses) < hd(losses) / 4
      assert is_list(binding[:points])
    after
      {backend, options} = previous
      Nx.default_backend(backend)
      Nx.Defn.default_options(options)
    end
  end
end
