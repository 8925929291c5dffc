defmodule Nx.Vulkan.BeamTest do
  # BEAM-level robustness: racing processes, tensor churn, processes killed mid-op, use after
  # deallocation, a 2 GiB transfer. Not async: memory statistics must not see other tests.
  use Nx.Vulkan.Case, async: false

  # Collects garbage everywhere until device memory stops shrinking (resource destructors run
  # when the last reference goes; recorded work may still hold buffers for a moment).
  defp settle_memory(baseline, attempts \\ 100) do
    for pid <- Process.list(), do: :erlang.garbage_collect(pid)
    Nx.Vulkan.synchronize()
    stats = Nx.Vulkan.memory_statistics()

    cond do
      stats.bytes_in_use <= baseline.bytes_in_use and stats.buffers <= baseline.buffers -> stats
      attempts == 0 -> stats
      true -> Process.sleep(20) && settle_memory(baseline, attempts - 1)
    end
  end

  defp baseline do
    for pid <- Process.list(), do: :erlang.garbage_collect(pid)
    Nx.Vulkan.synchronize()
    Nx.Vulkan.memory_statistics()
  end

  test "clear_cache gives the memory of dropped tensors back" do
    t = Nx.iota({65_536}, type: :f32)
    Nx.backend_deallocate(t)
    Nx.Vulkan.synchronize()
    assert Nx.Vulkan.memory_statistics().cached_bytes > 0
    assert :ok == Nx.Vulkan.clear_cache()
    assert Nx.Vulkan.memory_statistics().cached_bytes == 0
    assert Nx.to_flat_list(Nx.iota({4}, type: :f32)) == [0.0, 1.0, 2.0, 3.0]
  end

  test "a memory limit raises out of memory and the device goes on" do
    limit = baseline().bytes_in_use + 1_000_000

    try do
      assert :ok == Nx.Vulkan.set_memory_limit(limit)
      assert Nx.Vulkan.memory_statistics().memory_limit == limit
      small = Nx.iota({1000}, type: :f32)

      assert_raise Nx.Vulkan.Error, ~r/memory limit of #{limit} bytes/, fn ->
        Nx.iota({1_000_000}, type: :f32)
      end

      assert small |> Nx.add(1) |> Nx.to_flat_list() |> Enum.take(2) == [1.0, 2.0]
    after
      Nx.Vulkan.set_memory_limit(:infinity)
    end

    assert Nx.Vulkan.memory_statistics().memory_limit == 0
    assert Nx.iota({1_000_000}, type: :f32) |> Nx.sum() |> Nx.to_number() > 0
    assert_raise ArgumentError, fn -> Nx.Vulkan.set_memory_limit(-1) end
  end

  test "100 processes racing ops on shared and private tensors" do
    shared = Nx.iota({64}, type: :f32)
    expected_shared = Nx.to_binary(shared)

    tasks =
      for i <- 1..100 do
        Task.async(fn ->
          Nx.default_backend(Nx.Vulkan.Backend)
          mine = Nx.multiply(Nx.iota({64}, type: :f32), i)

          result =
            Enum.reduce(1..20, mine, fn _, acc ->
              acc |> Nx.add(shared) |> Nx.subtract(shared) |> Nx.max(-1.0e9)
            end)

          {i, Nx.to_flat_list(result)}
        end)
      end

    for {i, values} <- Task.await_many(tasks, 120_000) do
      assert values == Enum.map(0..63, &(&1 * i * 1.0))
    end

    assert Nx.to_binary(shared) == expected_shared
  end

  test "50k tensors created and dropped: device memory back to baseline" do
    base = baseline()

    Enum.each(1..50, fn _ ->
      # 1000 per batch, each in a short-lived process so its heap goes at once.
      task =
        Task.async(fn ->
          Nx.default_backend(Nx.Vulkan.Backend)

          Enum.each(1..1000, fn i ->
            t = Nx.from_binary(<<i::32-float-native, 1.0::32-float-native>>, :f32)
            _ = Nx.add(t, t)
          end)
        end)

      Task.await(task, 120_000)
    end)

    stats = settle_memory(base)
    assert stats.bytes_in_use == base.bytes_in_use
    assert stats.buffers == base.buffers
  end

  test "200 processes killed mid-op: no crash, no leak, the device still works" do
    base = baseline()
    big = Nx.iota({256, 1024}, type: :f32)

    pids =
      for i <- 1..200 do
        spawn(fn ->
          Nx.default_backend(Nx.Vulkan.Backend)

          Stream.iterate(big, fn t -> t |> Nx.add(i) |> Nx.multiply(0.5) end)
          |> Enum.each(fn t -> Nx.to_binary(t, limit: 1) end)
        end)
      end

    Process.sleep(200)
    Enum.each(pids, &Process.exit(&1, :kill))
    refute Enum.any?(pids, &Process.alive?/1)

    _ = Nx.to_binary(big)
    :erlang.garbage_collect()

    # `big` is still alive here, everything the killed processes made must be gone.
    stats =
      settle_memory(%{
        base
        | bytes_in_use: base.bytes_in_use + 256 * 1024 * 4,
          buffers: base.buffers + 1
      })

    assert stats.bytes_in_use <= base.bytes_in_use + 256 * 1024 * 4
    assert Nx.to_flat_list(Nx.add(Nx.tensor([1.0]), 1.0)) == [2.0]
  end

  test "a tensor used after deallocation raises, in any process" do
    t = Nx.iota({16}, type: :f32)
    assert Nx.backend_deallocate(t) == :ok

    task =
      Task.async(fn ->
        try do
          Nx.to_binary(t)
          :no_error
        rescue
          e in Nx.Vulkan.Error -> e.kind
        end
      end)

    assert Task.await(task) == :deallocated
    assert_raise Nx.Vulkan.Error, ~r/deallocated/, fn -> Nx.exp(t) end
  end

  test "concurrent deallocate and use never crash" do
    for _ <- 1..50 do
      t = Nx.iota({4096}, type: :f32)

      users =
        for _ <- 1..4 do
          Task.async(fn ->
            try do
              Nx.to_binary(Nx.add(t, 1.0))
              :ok
            rescue
              e in Nx.Vulkan.Error -> e.kind
            end
          end)
        end

      Nx.backend_deallocate(t)
      assert Enum.all?(Task.await_many(users), &(&1 in [:ok, :deallocated]))
    end
  end

  test "device memory exhausted: a clean :out_of_memory error, the device stays usable" do
    # The heap limit applies when the device is opened: run in a fresh VM with this build's
    # code paths.
    script = """
    {:ok, _} = Application.ensure_all_started(:nx_vulkan)
    Nx.global_default_backend(Nx.Vulkan.Backend)
    a = Nx.from_binary(:binary.copy(<<1.0::float-32-native>>, 10_000), :f32)
    col = Nx.new_axis(a, 1)
    row = Nx.new_axis(a, 0)
    kind =
      try do
        Nx.add(col, row)
        :no_error
      rescue
        e in Nx.Vulkan.Error -> e.kind
      end
    IO.puts("kind=\#{kind}")
    IO.puts("after=\#{inspect(Nx.to_flat_list(Nx.add(Nx.tensor([1.0]), 1.0)))}")
    """

    paths = Enum.flat_map(:code.get_path(), &["-pa", List.to_string(&1)])

    {output, status} =
      System.cmd("elixir", paths ++ ["-e", script],
        env: [{"NX_VULKAN_HEAP_LIMIT", "100000000"}],
        stderr_to_stdout: true
      )

    assert status == 0, output
    assert output =~ "kind=out_of_memory"
    assert output =~ "after=[2.0]"
  end

  test "a compiled call out of device memory: a clean :out_of_memory error, nothing kept, the next call works" do
    script = """
    {:ok, _} = Application.ensure_all_started(:nx_vulkan)
    Nx.global_default_backend(Nx.Vulkan.Backend)
    outer = Nx.Defn.jit(fn a -> Nx.exp(Nx.add(Nx.new_axis(a, 1), Nx.new_axis(a, 0))) end, compiler: Nx.Vulkan.Compiler)
    small = Nx.from_binary(:binary.copy(<<1.0::float-32-native>>, 100), :f32)
    [_ | _] = Nx.to_flat_list(outer.(small))
    Nx.Vulkan.synchronize()
    base = Nx.Vulkan.memory_statistics().bytes_in_use
    a = Nx.from_binary(:binary.copy(<<1.0::float-32-native>>, 10_000), :f32)
    kind =
      try do
        outer.(a)
        :no_error
      rescue
        e in Nx.Vulkan.Error -> e.kind
      end
    IO.puts("kind=\#{kind}")
    :erlang.garbage_collect()
    Nx.Vulkan.synchronize()
    IO.puts("kept=\#{Nx.Vulkan.memory_statistics().bytes_in_use - base - 40_000}")
    IO.puts("after=\#{inspect(Nx.to_flat_list(outer.(Nx.tensor([0.0]))))}")
    """

    {output, status} = run_vm(script, [{"NX_VULKAN_HEAP_LIMIT", "100000000"}])
    assert status == 0, output
    assert output =~ "kind=out_of_memory"
    assert [_, kept] = Regex.run(~r/kept=(-?\d+)/, output)
    assert String.to_integer(kept) <= 0, output
    assert output =~ "after=[1.0]"
  end

  defp run_vm(script, env) do
    paths = Enum.flat_map(:code.get_path(), &["-pa", List.to_string(&1)])
    System.cmd("elixir", paths ++ ["-e", script], env: env, stderr_to_stdout: true)
  end

  test "the pipeline cache is written at application stop and a second VM creates its pipelines from it" do
    dir = Path.join(System.tmp_dir!(), "nxv-pipelines-#{System.unique_integer([:positive])}")
    File.rm_rf!(dir)

    script = """
    {:ok, _} = Application.ensure_all_started(:nx_vulkan)
    t = Nx.tensor([1.0, -2.0, 3.0], backend: Nx.Vulkan.Backend)
    [4.0, 1.5, 6.0] = t |> Nx.abs() |> Nx.add(1.0) |> Nx.multiply(Nx.tensor([2.0, 0.5, 1.5])) |> Nx.to_flat_list()
    :ok = Application.stop(:nx_vulkan)
    s = Nx.Vulkan.kernel_cache_statistics()
    IO.puts("stats compiled=\#{s.compiled} pipelines=\#{s.pipelines} loaded=\#{s.pipeline_cache_loaded_bytes} saves=\#{s.pipeline_cache_saves} hits=\#{s.pipeline_cache_hits}")
    """

    # No background save within the test: the first VM's pipelines reach the disk at stop.
    env = [{"NX_VULKAN_CACHE_DIR", dir}, {"NX_VULKAN_PIPELINE_SAVE_MS", "600000"}]
    {first, 0} = run_vm(script, env)
    [compiled, pipelines, loaded, saves, _] = stats_of(first)
    assert compiled >= 1 and pipelines >= 1 and loaded == 0 and saves == 1, first
    assert [_] = Path.wildcard(Path.join(dir, "pipelines-*.bin"))

    {second, 0} = run_vm(script, env)
    [compiled, pipelines, loaded, _, hits] = stats_of(second)
    # SPIR-V and pipelines both come from the cache the first VM left.
    assert compiled == 0 and pipelines >= 1 and loaded >= 32, second
    # Drivers that report pipeline-cache hits (creation feedback) say all of them were hits.
    assert hits == 0 or hits == pipelines, second
    File.rm_rf!(dir)
  end

  defp stats_of(output) do
    regex = ~r/stats compiled=(\d+) pipelines=(\d+) loaded=(\d+) saves=(\d+) hits=(\d+)/
    [_ | values] = Regex.run(regex, output) || flunk("no statistics in:\n" <> output)
    Enum.map(values, &String.to_integer/1)
  end

  # In a VM of its own: the refusal below is global to the VM.
  test "a refusal is remembered per op and per call kind, and only that kind goes to the host" do
    script = """
    alias Nx.Vulkan.Native
    Application.put_env(:nx_vulkan, :host_fallback, :allow)
    f = Nx.tensor([1.5, -2.0, 3.0], backend: Nx.Vulkan.Backend)
    i = Nx.tensor([1, -2, 3], backend: Nx.Vulkan.Backend)
    {:ok, {id, depends}} = Native.native_entry(:add, {:f, 32}, [f, f])
    IO.puts("refused_before=\#{Native.refused_before?(id)}")
    native = Nx.to_flat_list(Nx.add(f, f))
    IO.puts("counts_native=\#{inspect(Nx.Vulkan.fallback_counts())}")
    key = Native.support_key(Nx.Vulkan.default_device(), :add, f, [f, f], [], depends)
    Native.refuse(id, key, "refused by the test")
    IO.puts("refused_after=\#{Native.refused_before?(id)}")
    host = Nx.to_flat_list(Nx.add(f, f))
    IO.puts("same=\#{host == native} counts_f32=\#{inspect(Nx.Vulkan.fallback_counts())}")
    ints = Nx.to_flat_list(Nx.add(i, i))
    IO.puts("ints=\#{inspect(ints)} counts_s32=\#{inspect(Nx.Vulkan.fallback_counts())}")
    """

    {output, status} = run_vm(script, [])
    assert status == 0, output
    assert output =~ "refused_before=false"
    assert output =~ "counts_native=%{}"
    assert output =~ "refused_after=true"
    # The refused kind (f32 adds) runs on the host with the same result; s32 adds stay native.
    assert output =~ "same=true counts_f32=%{add: 1}"
    assert output =~ "ints=[2, -4, 6] counts_s32=%{add: 1}"
  end

  # In a VM of its own: the refusal below is global to the VM.
  test "a compiled function with an op the engine refuses runs it as a host step, counted per call" do
    script = """
    alias Nx.Vulkan.Native
    {:ok, _} = Application.ensure_all_started(:nx_vulkan)
    Application.put_env(:nx_vulkan, :host_fallback, :allow)
    Nx.default_backend(Nx.Vulkan.Backend)
    f = Nx.tensor([1.5, -2.0, 3.0])
    {:ok, {id, depends}} = Native.native_entry(:atan2, {:f, 32}, [f, f])
    key = Native.support_key(Nx.Vulkan.default_device(), :atan2, f, [f, f], [], depends)
    Native.refuse(id, key, "refused by the test")
    parent = self()
    :telemetry.attach("c", [:nx_vulkan, :compilation], fn _, _, m, _ -> send(parent, m) end, nil)
    fun = fn x -> x |> Nx.exp() |> Nx.atan2(x) |> Nx.multiply(2) end
    compiled = Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler)
    eager = Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator)
    same = Nx.to_binary(compiled.(f)) == Nx.to_binary(eager.(f))
    receive do m -> IO.puts("mode=\#{m.mode} host_steps=\#{m.host_steps}") end
    compiled.(Nx.tensor([0.5, 1.0, 2.0]))
    IO.puts("same=\#{same} counts=\#{inspect(Nx.Vulkan.fallback_counts())}")
    strict = Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler, native_fallback: :raise)
    message = try do strict.(f) rescue e in Nx.Vulkan.Error -> e.message end
    IO.puts("strict=\#{message}")
    """

    {output, status} = run_vm(script, [])
    assert status == 0, output
    assert output =~ "mode=steps host_steps=1"
    # Two calls of the compiled function and one eager run: atan2 went to the host three times.
    assert output =~ "same=true counts=%{atan2: 3}"

    assert output =~
             ~r/strict=.*atan2 runs on the host \(refused by the test\).*native_fallback: :raise/
  end

  test "a script that never starts the application gets it started by its first op" do
    script = """
    t = Nx.tensor([1.0, 2.0], backend: Nx.Vulkan.Backend)
    IO.puts("sum=\#{inspect(Nx.to_flat_list(Nx.add(t, t)))}")
    IO.puts("started=\#{Enum.any?(Application.started_applications(), &(elem(&1, 0) == :nx_vulkan))}")
    """

    {output, status} = run_vm(script, [])
    assert status == 0, output
    assert output =~ "sum=[2.0, 4.0]"
    assert output =~ "started=true"
  end

  test "a failed submission loses only what it would have computed, says why, and the device goes on" do
    device = Nx.Vulkan.default_device()
    x = Nx.iota({1000}, type: :f32, backend: Nx.Vulkan.Backend)
    Nx.Vulkan.synchronize()

    # The op records at once (exp: a kernel, where an add on an idle stream of a CPU driver
    # would be computed by the host); its batch fails on the submitting thread. Reading its
    # result raises every time, naming the failure.
    :ok = Nx.Vulkan.NIF.fail_submission(device, 1, false)
    lost = Nx.exp(x)

    for _ <- 1..2 do
      error = assert_raise Nx.Vulkan.Error, fn -> Nx.to_binary(lost) end
      assert error.kind == :driver
      assert error.message =~ "lost"
      assert error.message =~ "vkQueueSubmit2"
    end

    assert_raise Nx.Vulkan.Error, ~r/lost/, fn -> Nx.add(lost, 1.0) end
    Nx.Vulkan.synchronize()
    assert Nx.to_flat_list(Nx.add(x, 1.0)) |> Enum.take(2) == [1.0, 2.0]

    # A failure while the device is busy: what was recorded behind it is lost too.
    big = Nx.iota({4_000_000}, type: :f32, backend: Nx.Vulkan.Backend)
    Nx.Vulkan.synchronize()
    :ok = Nx.Vulkan.NIF.fail_submission(device, 2, false)
    _busy = Nx.multiply(big, big)

    # The add's constant or the add itself may be in the failed batch: recording or reading
    # then raises.
    case catch_read(fn -> Nx.add(x, 2.0) end) do
      {:raised, e} ->
        assert e.message =~ "lost"

      # Both ops went in the first submission: the second one would be later work (so the
      # expected bytes are built without any tensor op, never in that second submission).
      {:ok, binary} ->
        assert binary == for(i <- 0..999, into: <<>>, do: <<i + 2.0::float-32-native>>)
    end

    :ok = Nx.Vulkan.NIF.fail_submission(device, 0, false)
    Nx.Vulkan.synchronize()
    assert Nx.to_flat_list(Nx.add(x, 3.0)) |> Enum.take(2) == [3.0, 4.0]
  end

  test "a lost device raises :device_lost until it is reopened, and its tensors stay lost" do
    script = """
    device = Nx.Vulkan.default_device()
    x = Nx.iota({1000}, type: :f32, backend: Nx.Vulkan.Backend)
    Nx.Vulkan.synchronize()
    :ok = Nx.Vulkan.NIF.fail_submission(device, 1, true)
    y = Nx.exp(x)
    kind = fn f -> try do f.(); :no_error rescue e in Nx.Vulkan.Error -> e.kind end end
    IO.puts("read=\#{kind.(fn -> Nx.to_binary(y) end)}")
    IO.puts("op=\#{kind.(fn -> Nx.add(x, 1.0) end)}")
    :ok = Nx.Vulkan.reopen_device(device)
    z = Nx.iota({3}, type: :f32, backend: Nx.Vulkan.Backend)
    IO.puts("fresh=\#{inspect(Nx.to_flat_list(Nx.add(z, z)))}")
    IO.puts("old=\#{kind.(fn -> Nx.to_binary(x) end)}")
    """

    {output, status} = run_vm(script, [])
    assert status == 0, output
    assert output =~ "read=device_lost"
    assert output =~ "op=device_lost"
    assert output =~ "fresh=[0.0, 2.0, 4.0]"
    assert output =~ "old=device_lost"
  end

  test "a compiled function on a lost device raises :device_lost, and after a reopen compiles again" do
    script = """
    device = Nx.Vulkan.default_device()
    f = Nx.Defn.jit(fn a -> Nx.exp(Nx.add(a, 1)) end, compiler: Nx.Vulkan.Compiler)
    x = Nx.iota({1000}, type: :f32, backend: Nx.Vulkan.Backend)
    [_ | _] = Nx.to_flat_list(f.(x))
    Nx.Vulkan.synchronize()
    :ok = Nx.Vulkan.NIF.fail_submission(device, 1, true)
    kind = fn g -> try do g.(); :no_error rescue e in Nx.Vulkan.Error -> e.kind end end
    IO.puts("read=\#{kind.(fn -> Nx.to_binary(f.(x)) end)}")
    IO.puts("call=\#{kind.(fn -> f.(x) end)}")
    :ok = Nx.Vulkan.reopen_device(device)
    w = Nx.iota({1000}, type: :f32, backend: Nx.Vulkan.Backend)
    IO.puts("again=\#{inspect(Nx.to_flat_list(f.(w)) |> Enum.take(2))}")
    """

    {output, status} = run_vm(script, [])
    assert status == 0, output
    assert output =~ "read=device_lost"
    assert output =~ "call=device_lost"
    assert output =~ "again=[2.7182817459106445, 7.389056205749512]"
  end

  defp catch_read(fun) do
    {:ok, Nx.to_binary(fun.())}
  rescue
    e in Nx.Vulkan.Error -> {:raised, e}
  end

  @tag :large
  @tag timeout: 900_000
  test "a 2 GiB tensor goes to the device and back" do
    size = 2 * 1024 * 1024 * 1024
    pattern = :rand.bytes(1024 * 1024)
    data = :binary.copy(pattern, div(size, byte_size(pattern)))
    assert byte_size(data) == size

    t = Nx.from_binary(data, :u8, backend: Nx.Vulkan.Backend)
    back = Nx.to_binary(t)
    assert byte_size(back) == size
    assert back == data
    assert Nx.to_binary(t, limit: 10) == binary_part(data, 0, 10)
    Nx.backend_deallocate(t)
  end
end
