# The NIF's build: a precompiled archive where the package has one for this machine, else
# CMake (mix/nif.exs).
Code.require_file("mix/nif.exs", __DIR__)

defmodule NxVulkan.OfflineSCM do
  @moduledoc false
  # Only with NX_PATH and without Hex: Nx's own mix.exs names Hex packages (complex,
  # telemetry, docs tools), which Mix cannot even load without an SCM for them. This
  # stand-in accepts them; the path overrides (COMPLEX_PATH, TELEMETRY_PATH) replace them and
  # any left over reports as unavailable instead of asking to install Hex.
  @behaviour Mix.SCM

  @impl true
  def fetchable?, do: false
  @impl true
  def format(_opts), do: "Hex package (offline: give a path override)"
  @impl true
  def format_lock(_opts), do: nil
  @impl true
  def accepts_options(_app, opts), do: opts
  @impl true
  def checked_out?(opts), do: File.dir?(opts[:dest])
  @impl true
  def lock_status(_opts), do: :ok
  @impl true
  def equal?(opts1, opts2), do: opts1[:dest] == opts2[:dest]
  @impl true
  def managers(_opts), do: []
  @impl true
  def checkout(opts), do: Mix.raise("Hex is not available offline: #{opts[:dest]}")
  @impl true
  def update(opts), do: checkout(opts)
end

if System.get_env("NX_PATH") && !Code.ensure_loaded?(Hex) do
  Mix.SCM.append(NxVulkan.OfflineSCM)
end

defmodule NxVulkan.MixProject do
  use Mix.Project

  @version "0.1.0-dev"
  @source_url "https://github.com/nx-vulkan/nx_vulkan"

  def project do
    [
      app: :nx_vulkan,
      version: @version,
      elixir: "~> 1.15",
      start_permanent: Mix.env() == :prod,
      compilers: [:nx_vulkan_nif] ++ Mix.compilers(),
      deps: deps(),
      elixirc_paths: elixirc_paths(Mix.env()),
      description: "A Vulkan GPU backend for Nx",
      package: package(),
      source_url: @source_url,
      docs: [
        main: "readme",
        extras:
          ["README.md" | Path.wildcard("guides/*.md")] ++ Path.wildcard("notebooks/*.livemd")
      ]
    ]
  end

  def application do
    [
      extra_applications: [:logger],
      mod: {Nx.Vulkan.Application, []},
      env: [host_fallback: :warn]
    ]
  end

  # tools/fixtures: the conformance-fixture generator (`mix nx_vulkan.fixtures`), a developer
  # tool compiled in :dev and :test only and not in the package.
  defp elixirc_paths(:test), do: ["lib", "tools/fixtures", "test/nx_vulkan/support"]
  defp elixirc_paths(:dev), do: ["lib", "tools/fixtures"]
  defp elixirc_paths(_), do: ["lib"]

  # Hex is the normal source. NX_PATH (the `nx` folder of an elixir-nx/nx checkout) switches to
  # local checkouts, with COMPLEX_PATH and TELEMETRY_PATH for Nx's own dependencies.
  defp deps do
    case System.get_env("NX_PATH") do
      nil ->
        [{:nx, "~> 0.10 or ~> 1.0"}, {:telemetry, "~> 0.4.0 or ~> 1.0"}]

      nx_path ->
        [{:nx, path: nx_path}] ++
          path_dep(:complex, "COMPLEX_PATH") ++
          path_dep(:telemetry, "TELEMETRY_PATH", {:telemetry, "~> 0.4.0 or ~> 1.0"})
    end
  end

  defp path_dep(app, env, default \\ nil) do
    case System.get_env(env) do
      nil -> if default, do: [default], else: []
      path -> [{app, path: path, override: true}]
    end
  end

  defp package do
    [
      licenses: ["Apache-2.0"],
      links: %{"GitHub" => @source_url},
      # The backend only: the fixture generator (tools/fixtures) and the tests stay out.
      files:
        ~w(lib nif engine cmake mix guides notebooks CMakeLists.txt mix.exs checksum.exs README.md LICENSE)
    ]
  end
end
