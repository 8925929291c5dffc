defmodule Mix.Tasks.Compile.NxVulkanNif do
  @moduledoc """
  Builds the NIF (`nif/`, CMake target `nx_vulkan_nif`, which links the C++ engine) and copies
  it to `priv/libnx_vulkan_nif.so`.

  Environment:

    * `NX_VULKAN_SKIP_NIF=1` - do not build (use the library already in `priv/`).
    * `NX_VULKAN_CMAKE_BUILD_TYPE` - CMake build type, default `RelWithDebInfo`.
    * `NX_VULKAN_CMAKE_ARGS` - extra arguments for the configure step (split on spaces).
  """
  use Mix.Task.Compiler

  @build_dir "_build/cmake"
  @target "nx_vulkan_nif"
  @library "libnx_vulkan_nif.so"

  @impl true
  def run(_args) do
    if System.get_env("NX_VULKAN_SKIP_NIF") in ["1", "true"] do
      {:noop, []}
    else
      build()
    end
  end

  defp build do
    root = File.cwd!()
    build_type = System.get_env("NX_VULKAN_CMAKE_BUILD_TYPE", "RelWithDebInfo")
    extra = String.split(System.get_env("NX_VULKAN_CMAKE_ARGS", ""), " ", trim: true)

    configure =
      [
        "-S",
        ".",
        "-B",
        @build_dir,
        "-G",
        "Ninja",
        "-DNXV_BUILD_NIF=ON",
        "-DNXV_BUILD_TESTS=OFF",
        "-DNXV_BUILD_BENCHMARKS=OFF",
        "-DCMAKE_BUILD_TYPE=#{build_type}"
      ] ++ extra

    # Configure only once (or when the cache is gone); Ninja re-runs CMake itself when a
    # CMakeLists.txt changes.
    unless File.exists?(Path.join([root, @build_dir, "build.ninja"])) do
      cmake!(configure, root)
    end

    cmake!(["--build", @build_dir, "--target", @target], root)

    built = find_library!(Path.join(root, @build_dir))
    priv = Path.join(root, "priv")
    File.mkdir_p!(priv)
    dest = Path.join(priv, @library)

    if not File.exists?(dest) or File.read!(dest) != File.read!(built) do
      # Write a new file and rename it over the old one: a VM that has the old
      # library mapped keeps its copy intact.
      tmp = dest <> ".tmp"
      File.cp!(built, tmp)
      File.rename!(tmp, dest)
    end

    # `priv/` may not have existed when Mix linked the build directory.
    Mix.Project.build_structure()
    {:ok, []}
  end

  # Quiet when there is nothing to do; the full output when CMake works or fails.
  defp cmake!(args, root) do
    {output, status} = System.cmd("cmake", args, cd: root, stderr_to_stdout: true)

    cond do
      status != 0 ->
        Mix.shell().info(output)
        Mix.raise("cmake #{Enum.join(args, " ")} failed with status #{status}")

      output =~ "no work to do" ->
        :ok

      true ->
        Mix.shell().info("cmake " <> Enum.join(args, " "))
        Mix.shell().info(output)
    end
  end

  defp find_library!(build_dir) do
    case Path.wildcard(Path.join(build_dir, "**/#{@library}")) do
      [path | _] -> path
      [] -> Mix.raise("#{@library} was not produced under #{build_dir}")
    end
  end

  @impl true
  def clean do
    File.rm_rf!("_build/cmake")
    File.rm(Path.join("priv", @library))
    :ok
  end
end

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
      files: ~w(lib nif engine guides notebooks CMakeLists.txt mix.exs README.md LICENSE)
    ]
  end
end
