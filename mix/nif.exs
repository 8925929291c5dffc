defmodule NxVulkan.NifBuild do
  @moduledoc false
  # Where the NIF comes from. A package carries `checksum.exs`: the SHA-256 of each precompiled
  # archive (one per target and NIF version, made by `mix nx_vulkan.precompile`). When it has
  # one for this machine, `mix compile` downloads it, checks it and installs it in `priv/`;
  # otherwise (or with NX_VULKAN_BUILD=true) CMake builds the NIF from source.

  @library "libnx_vulkan_nif.so"
  @source_url "https://github.com/nx-vulkan/nx_vulkan"

  def library, do: @library

  # "x86_64-linux-gnu", "aarch64-linux-gnu", "x86_64-freebsd", ...
  def target do
    arch = to_string(:erlang.system_info(:system_architecture))
    [cpu | _] = String.split(arch, "-")

    cpu =
      case cpu do
        "amd64" -> "x86_64"
        "arm64" -> "aarch64"
        other -> other
      end

    os =
      cond do
        arch =~ "linux" and arch =~ "musl" -> "linux-musl"
        arch =~ "linux" -> "linux-gnu"
        arch =~ "freebsd" -> "freebsd"
        arch =~ "darwin" -> "darwin"
        true -> "unknown"
      end

    "#{cpu}-#{os}"
  end

  def nif_version, do: to_string(:erlang.system_info(:nif_version))

  def archive_name(version, nif_version \\ nif_version(), target \\ target()) do
    "libnx_vulkan_nif-v#{version}-nif-#{nif_version}-#{target}.tar.gz"
  end

  def checksum_file(root), do: Path.join(root, "checksum.exs")

  # %{archive name => "sha256:<hex>"}, empty where the file is absent (a source checkout).
  def checksums(root) do
    path = checksum_file(root)
    if File.exists?(path), do: path |> Code.eval_file() |> elem(0), else: %{}
  end

  def base_url(version) do
    System.get_env("NX_VULKAN_PRECOMPILED_URL") ||
      Application.get_env(:nx_vulkan, :precompiled_url) ||
      "#{@source_url}/releases/download/v#{version}"
  end

  def cache_dir do
    System.get_env("NX_VULKAN_PRECOMPILED_CACHE") ||
      :filename.basedir(:user_cache, ~c"nx_vulkan") |> to_string()
  end

  def sha256(data) do
    Mix.ensure_application!(:crypto)
    "sha256:" <> Base.encode16(:crypto.hash(:sha256, data), case: :lower)
  end

  # Installs the archive's library in priv/ unless the one there came from the same archive.
  def install_precompiled!(root, version, name, checksum) do
    priv = Path.join(root, "priv")
    dest = Path.join(priv, @library)
    stamp = Path.join(priv, ".precompiled")

    if File.exists?(dest) and File.read(stamp) == {:ok, "#{name} #{checksum}"} do
      :noop
    else
      data = fetch!(version, name, checksum)
      library = extract_library!(data, name)
      File.mkdir_p!(priv)
      File.rm(stamp)
      # A new file renamed over the old one: a VM that has the old library mapped keeps it.
      tmp = dest <> ".tmp"
      File.write!(tmp, library)
      File.rename!(tmp, dest)
      File.write!(stamp, "#{name} #{checksum}")
      Mix.shell().info("nx_vulkan: installed the precompiled NIF #{name}")
      :ok
    end
  end

  # The archive's bytes, checked: from the cache where a download matched before, else
  # downloaded (and cached only once it matches).
  defp fetch!(version, name, checksum) do
    cached = Path.join(cache_dir(), name)

    with {:ok, data} <- File.read(cached), ^checksum <- sha256(data) do
      data
    else
      _ ->
        File.rm(cached)
        url = base_url(version) <> "/" <> name
        Mix.shell().info("nx_vulkan: downloading #{url}")
        data = download!(url)
        got = sha256(data)

        if got != checksum do
          Mix.raise("""
          the precompiled NIF #{name} does not match checksum.exs: expected #{checksum}, \
          got #{got} (from #{url}). Nothing was installed. Build from source with \
          NX_VULKAN_BUILD=true, or point NX_VULKAN_PRECOMPILED_URL at a good copy.\
          """)
        end

        File.mkdir_p!(cache_dir())
        File.write!(cached, data)
        data
    end
  end

  defp download!(url) do
    # Mix keeps OTP applications a project does not name off the code path.
    for app <- [:inets, :ssl, :public_key, :crypto], do: Mix.ensure_application!(app)
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)

    ssl =
      if String.starts_with?(url, "https:") do
        [
          ssl: [
            verify: :verify_peer,
            cacerts: :public_key.cacerts_get(),
            customize_hostname_check: [
              match_fun: :public_key.pkix_verify_hostname_match_fun(:https)
            ]
          ]
        ]
      else
        []
      end

    case :httpc.request(:get, {String.to_charlist(url), []}, ssl ++ [timeout: 120_000],
           body_format: :binary
         ) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        body

      {:ok, {{_, status, _}, _headers, _body}} ->
        Mix.raise(
          "could not download the precompiled NIF from #{url}: HTTP #{status}. " <>
            "Set NX_VULKAN_PRECOMPILED_URL to a mirror, or build from source with NX_VULKAN_BUILD=true."
        )

      {:error, reason} ->
        Mix.raise(
          "could not download the precompiled NIF from #{url}: #{inspect(reason)}. " <>
            "Set NX_VULKAN_PRECOMPILED_URL to a mirror, or build from source with NX_VULKAN_BUILD=true."
        )
    end
  end

  defp extract_library!(data, name) do
    case :erl_tar.extract({:binary, data}, [:compressed, :memory]) do
      {:ok, files} ->
        case List.keyfind(files, String.to_charlist(@library), 0) do
          {_, library} -> library
          nil -> Mix.raise("the precompiled archive #{name} holds no #{@library}")
        end

      {:error, reason} ->
        Mix.raise("the precompiled archive #{name} could not be read: #{inspect(reason)}")
    end
  end

  # CMake's configure step for the NIF alone (no tests, no benchmarks) into `build_dir`.
  def configure_args(build_dir, build_type, extra) do
    ~w(-S . -B #{build_dir} -G Ninja -DNXV_BUILD_NIF=ON -DNXV_BUILD_TESTS=OFF -DNXV_BUILD_BENCHMARKS=OFF) ++
      ["-DCMAKE_BUILD_TYPE=#{build_type}" | extra]
  end

  # What a source build needs, for the error where a tool is missing.
  def source_build_packages do
    "CMake and Ninja, a C++20 compiler (g++ 12 or clang 15), the Vulkan headers and loader, " <>
      "shaderc with glslc, and Vulkan Memory Allocator (Debian/Ubuntu: cmake ninja-build g++ " <>
      "libvulkan-dev glslc libshaderc-dev spirv-tools libvulkan-memory-allocator-dev; FreeBSD: " <>
      "cmake ninja vulkan-headers vulkan-loader shaderc vulkan-memory-allocator)"
  end
end

defmodule Mix.Tasks.Compile.NxVulkanNif do
  @moduledoc """
  Puts the NIF in `priv/libnx_vulkan_nif.so`: the precompiled archive for this machine where
  the package's `checksum.exs` lists one (downloaded from `NX_VULKAN_PRECOMPILED_URL`, or the
  release's URL, and checked against its SHA-256), else built from source by CMake (`nif/`,
  target `nx_vulkan_nif`, which links the C++ engine).

  Environment:

    * `NX_VULKAN_BUILD=true` - build from source even where an archive exists.
    * `NX_VULKAN_PRECOMPILED_URL` - where the archives are (also `config :nx_vulkan,
      precompiled_url: ...`); `NX_VULKAN_PRECOMPILED_CACHE` - where downloads are kept.
    * `NX_VULKAN_SKIP_NIF=1` - neither (use the library already in `priv/`).
    * `NX_VULKAN_CMAKE_BUILD_TYPE` - CMake build type, default `RelWithDebInfo`.
    * `NX_VULKAN_CMAKE_ARGS` - extra arguments for the configure step (split on spaces).
  """
  use Mix.Task.Compiler

  alias NxVulkan.NifBuild

  @build_dir "_build/cmake"
  @target "nx_vulkan_nif"

  @impl true
  def run(_args) do
    root = File.cwd!()
    version = Mix.Project.config()[:version]
    name = NifBuild.archive_name(version)
    checksum = NifBuild.checksums(root)[name]

    cond do
      System.get_env("NX_VULKAN_SKIP_NIF") in ["1", "true"] ->
        {:noop, []}

      System.get_env("NX_VULKAN_BUILD") in ["1", "true"] or checksum == nil ->
        build(root)

      true ->
        NifBuild.install_precompiled!(root, version, name, checksum)
        Mix.Project.build_structure()
        {:ok, []}
    end
  end

  defp build(root) do
    unless System.find_executable("cmake") do
      Mix.raise(
        "nx_vulkan: no precompiled NIF for #{NifBuild.target()} (NIF #{NifBuild.nif_version()}) " <>
          "or NX_VULKAN_BUILD is set, and building it from source needs cmake, which is not on " <>
          "PATH. A source build needs " <> NifBuild.source_build_packages() <> "."
      )
    end

    build_type = System.get_env("NX_VULKAN_CMAKE_BUILD_TYPE", "RelWithDebInfo")
    extra = String.split(System.get_env("NX_VULKAN_CMAKE_ARGS", ""), " ", trim: true)

    configure = NifBuild.configure_args(@build_dir, build_type, extra)

    # Configure only once (or when the cache is gone); Ninja re-runs CMake itself when a
    # CMakeLists.txt changes.
    unless File.exists?(Path.join([root, @build_dir, "build.ninja"])) do
      cmake!(configure, root)
    end

    cmake!(["--build", @build_dir, "--target", @target], root)

    built = find_library!(Path.join(root, @build_dir))
    priv = Path.join(root, "priv")
    File.mkdir_p!(priv)
    dest = Path.join(priv, NifBuild.library())
    File.rm(Path.join(priv, ".precompiled"))

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
  def cmake!(args, root) do
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

  def find_library!(build_dir) do
    case Path.wildcard(Path.join(build_dir, "**/#{NifBuild.library()}")) do
      [path | _] -> path
      [] -> Mix.raise("#{NifBuild.library()} was not produced under #{build_dir}")
    end
  end

  @impl true
  def clean do
    File.rm_rf!("_build/cmake")
    File.rm(Path.join("priv", NifBuild.library()))
    File.rm(Path.join("priv", ".precompiled"))
    :ok
  end
end

defmodule Mix.Tasks.NxVulkan.Precompile do
  @shortdoc "Builds this machine's precompiled NIF archive and records its checksum"
  @moduledoc """
  Builds the NIF for release on this machine's target: shaderc and the C++ runtime linked in,
  so that it needs nothing at run time but the system's Vulkan loader (opened when a device is
  first used) and libc. Writes `libnx_vulkan_nif-v<version>-nif-<nif version>-<target>.tar.gz`
  to `_build/precompiled/` (or `--out DIR`) and adds its SHA-256 to `checksum.exs`, which the
  package ships. Run it once per target (Linux x86_64 and aarch64 on glibc, FreeBSD x86_64) and
  upload the archives where `NX_VULKAN_PRECOMPILED_URL` (by default the release) points.

      mix nx_vulkan.precompile [--out DIR]
  """
  use Mix.Task

  alias NxVulkan.NifBuild

  @build_dir "_build/precompile"
  # Shared libraries the archive's NIF may need: libc's own.
  @allowed ~r/^(libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux[-\w.]*\.so|libc\.so\.7|libm\.so\.5|libthr\.so)/

  @impl true
  def run(args) do
    {opts, _} = OptionParser.parse!(args, strict: [out: :string])
    root = File.cwd!()
    out = opts[:out] || Path.join(root, "_build/precompiled")
    version = Mix.Project.config()[:version]

    Mix.Tasks.Compile.NxVulkanNif.cmake!(
      NifBuild.configure_args(@build_dir, "Release", ["-DNXV_STATIC_RUNTIME=ON"]),
      root
    )

    Mix.Tasks.Compile.NxVulkanNif.cmake!(
      ["--build", @build_dir, "--target", "nx_vulkan_nif"],
      root
    )

    library = Mix.Tasks.Compile.NxVulkanNif.find_library!(Path.join(root, @build_dir))
    check_needed!(library)

    name = NifBuild.archive_name(version)
    File.mkdir_p!(out)
    archive = Path.join(out, name)

    :ok =
      :erl_tar.create(
        String.to_charlist(archive),
        [{String.to_charlist(NifBuild.library()), File.read!(library)}],
        [
          :compressed
        ]
      )

    checksum = NifBuild.sha256(File.read!(archive))
    checksums = Map.put(NifBuild.checksums(root), name, checksum)

    File.write!(
      NifBuild.checksum_file(root),
      inspect(checksums, pretty: true, limit: :infinity) <> "\n"
    )

    Mix.shell().info("#{archive}\n#{checksum} (added to checksum.exs)")
  end

  defp check_needed!(library) do
    {output, 0} = System.cmd("readelf", ["-d", library])

    needed =
      Regex.scan(~r/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/, output)
      |> Enum.map(fn [_, lib] -> lib end)

    case Enum.reject(needed, &Regex.match?(@allowed, &1)) do
      [] ->
        :ok

      extra ->
        Mix.raise(
          "#{library} needs #{Enum.join(extra, ", ")} at run time: only libc's libraries may remain"
        )
    end
  end
end
