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

  # The notebook's Mix.install cell in a fresh VM, as Livebook runs it: its Hex-only entries
  # (Kino's VegaLite, for the plot) left out, Nx from the checkouts the suite uses (NX_PATH).
  @tag :large
  @tag timeout: 900_000
  test "the notebook's Mix.install cell installs the package in a fresh VM, which then runs an op" do
    [install] =
      ~r/```elixir\n(.*?)```/s
      |> Regex.scan(File.read!(@notebook), capture: :all_but_first)
      |> Enum.map(&hd/1)
      |> Enum.filter(&String.contains?(&1, "Mix.install"))

    install =
      install
      |> String.split("\n")
      |> Enum.reject(&(&1 =~ ~r/\{:kino/))
      |> Enum.join("\n")
      |> String.replace(~r/,\s*\]\)/, "])")

    assert install =~ "{:nx_vulkan, path: Path.join(__DIR__, \"..\")}"
    tmp = Path.join(System.tmp_dir!(), "nxv_mix_install_#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)

    script =
      Path.join(
        Path.dirname(@notebook),
        "mix_install_check_#{System.unique_integer([:positive])}.exs"
      )

    on_exit(fn -> File.rm(script) end)

    File.write!(script, """
    #{install}
    IO.puts("sum: " <> to_string(Nx.to_number(Nx.sum(Nx.tensor([1, 2, 3], backend: Nx.Vulkan.Backend)))))
    IO.puts("device: " <> Nx.Vulkan.device_info().name)
    """)

    {output, status} =
      System.cmd("elixir", [script],
        env: [{"MIX_INSTALL_DIR", tmp}, {"MIX_ENV", nil}],
        stderr_to_stdout: true
      )

    assert status == 0, output
    assert output =~ ~r/^sum: 6$/m
    assert output =~ ~r/^device: /m
  end
end
