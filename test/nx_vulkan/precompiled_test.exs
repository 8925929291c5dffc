# The loopback HTTP server is inets' (off the code path unless asked for).
Mix.ensure_application!(:inets)

defmodule Nx.Vulkan.PrecompiledTest do
  # The precompiled NIF as a user gets it: a fresh project depending on the package, compiled
  # with no CMake, compiler or shaderc on PATH, the archive served from a loopback HTTP server
  # and checked against the package's checksum.exs; then a corrupted archive (an error, nothing
  # installed) and a source build without CMake (an error naming the packages it needs).
  use ExUnit.Case, async: false

  alias NxVulkan.NifBuild

  @moduletag :large
  @moduletag timeout: 900_000

  # What `mix` needs to run; no cmake, c++, gcc, ninja or glslc.
  @tools ~w(env sh bash dash elixir erl erlc mix escript dirname readlink basename uname sed grep cat
            mkdir rm tr head cut expr ls cp mv touch)

  setup_all do
    tmp = Path.join(System.tmp_dir!(), "nxv_precompiled_#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)

    root = File.cwd!()
    version = Mix.Project.config()[:version]
    name = NifBuild.archive_name(version)

    # The archive of this build's NIF, served from www/.
    www = Path.join(tmp, "www")
    File.mkdir_p!(www)
    library = File.read!(Path.join([root, "priv", NifBuild.library()]))
    archive = Path.join(www, name)

    :ok =
      :erl_tar.create(String.to_charlist(archive), [{~c"libnx_vulkan_nif.so", library}], [
        :compressed
      ])

    checksum = NifBuild.sha256(File.read!(archive))

    {:ok, _} = Application.ensure_all_started(:inets)

    {:ok, server} =
      :inets.start(:httpd,
        port: 0,
        server_name: ~c"localhost",
        server_root: String.to_charlist(www),
        document_root: String.to_charlist(www),
        bind_address: {127, 0, 0, 1}
      )

    on_exit(fn -> :inets.stop(:httpd, server) end)
    port = :httpd.info(server)[:port]

    # The package as Hex would unpack it (its Elixir side: nothing here builds the engine).
    pkg = Path.join(tmp, "nx_vulkan")
    File.mkdir_p!(pkg)
    for dir <- ~w(lib mix), do: File.cp_r!(Path.join(root, dir), Path.join(pkg, dir))
    File.cp!(Path.join(root, "mix.exs"), Path.join(pkg, "mix.exs"))
    File.write!(Path.join(pkg, "checksum.exs"), inspect(%{name => checksum}))

    app = Path.join(tmp, "app")
    File.mkdir_p!(Path.join(app, "lib"))

    File.write!(Path.join(app, "mix.exs"), """
    defmodule App.MixProject do
      use Mix.Project
      def project, do: [app: :app, version: "0.1.0", deps: [{:nx_vulkan, path: "../nx_vulkan"}]]
    end
    """)

    bin = Path.join(tmp, "bin")
    File.mkdir_p!(bin)

    for tool <- @tools, path = System.find_executable(tool) do
      File.ln_s!(path, Path.join(bin, tool))
    end

    env = [
      {"PATH", bin},
      {"MIX_ENV", "prod"},
      {"NX_VULKAN_PRECOMPILED_URL", "http://127.0.0.1:#{port}"},
      {"NX_VULKAN_PRECOMPILED_CACHE", Path.join(tmp, "cache")},
      {"NX_VULKAN_BUILD", nil},
      {"NX_VULKAN_SKIP_NIF", nil}
    ]

    %{tmp: tmp, www: www, pkg: pkg, app: app, bin: bin, env: env, name: name, archive: archive}
  end

  defp mix(ctx, args, extra_env \\ []) do
    System.cmd(Path.join(ctx.bin, "mix"), args,
      cd: ctx.app,
      env: ctx.env ++ extra_env,
      stderr_to_stdout: true
    )
  end

  test "a fresh project gets the precompiled NIF with no build tools on PATH, and uses it", ctx do
    for tool <- ~w(cmake c++ g++ gcc cc clang ninja glslc) do
      {_, status} =
        System.cmd(Path.join(ctx.bin, "sh"), ["-c", "command -v #{tool}"],
          env: [{"PATH", ctx.bin}]
        )

      assert status != 0, "#{tool} is on the test's PATH"
    end

    {output, status} = mix(ctx, ["compile"])
    assert status == 0, output
    assert output =~ "installed the precompiled NIF #{ctx.name}"
    assert File.exists?(Path.join([ctx.pkg, "priv", NifBuild.library()]))

    {output, status} =
      mix(ctx, [
        "run",
        "-e",
        "IO.puts(Nx.to_number(Nx.sum(Nx.tensor([1, 2, 3], backend: Nx.Vulkan.Backend))))"
      ])

    assert status == 0, output
    assert output =~ ~r/^6$/m

    # A second compile finds the library in place: no download, no install.
    {output, status} = mix(ctx, ["compile"])
    assert status == 0, output
    refute output =~ "installed the precompiled NIF"
  end

  test "an archive that does not match checksum.exs is refused and nothing is installed", ctx do
    File.rm_rf!(Path.join(ctx.tmp, "cache"))
    File.rm_rf!(Path.join(ctx.pkg, "priv"))
    good = File.read!(ctx.archive)
    File.write!(ctx.archive, good <> "tampered")
    on_exit(fn -> File.write!(ctx.archive, good) end)

    {output, status} = mix(ctx, ["deps.compile", "nx_vulkan", "--force"])
    assert status != 0
    assert output =~ "does not match checksum.exs"
    assert output =~ "Nothing was installed"
    refute File.exists?(Path.join([ctx.pkg, "priv", NifBuild.library()]))
    # Nor kept: the next compile downloads again.
    refute File.exists?(Path.join([ctx.tmp, "cache", ctx.name]))
  end

  test "a source build without CMake says which packages it needs", ctx do
    {output, status} =
      mix(ctx, ["deps.compile", "nx_vulkan", "--force"], [{"NX_VULKAN_BUILD", "true"}])

    assert status != 0
    assert output =~ "needs cmake, which is not on PATH"
    assert output =~ "libshaderc-dev"
  end
end
