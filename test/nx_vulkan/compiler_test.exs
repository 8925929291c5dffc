defmodule Nx.Vulkan.CompilerTest do
  # Nx.Vulkan.Compiler: compiled calls against the same function run op by op (eager ops on
  # Nx.Vulkan.Backend through Nx.Defn.Evaluator, bit for bit: a program runs the same kernels,
  # and fused epilogues keep each op's rounding), its cache (traces counted), captured
  # tensors, donation, options and errors. Loops, conds and host steps:
  # compiler_control_flow_test.exs.
  use Nx.Vulkan.Case, async: false

  import Nx.Defn
  import Nx.Vulkan.Test.CompilerHelpers
  alias Nx.Vulkan.Compiler

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  defn mlp_loss(w1, b1, w2, b2, x, y) do
    h = Nx.max(Nx.dot(x, w1) + b1, 0)
    logits = Nx.dot(h, w2) + b2
    z = logits - Nx.reduce_max(logits, axes: [1], keep_axes: true)
    log_softmax = z - Nx.log(Nx.sum(Nx.exp(z), axes: [1], keep_axes: true))
    -Nx.mean(Nx.sum(log_softmax * y, axes: [1]))
  end

  defn sgd_step(w1, b1, w2, b2, x, y) do
    {g1, gb1, g2, gb2} =
      grad({w1, b1, w2, b2}, fn {w1, b1, w2, b2} -> mlp_loss(w1, b1, w2, b2, x, y) end)

    lr = 0.1
    {w1 - lr * g1, b1 - lr * gb1, w2 - lr * g2, b2 - lr * gb2}
  end

  describe "programs" do
    test "elementwise chains, dot with epilogues, reductions and views give the eager bits" do
      x = random({33, 17})
      w = random({17, 9})
      b = random({9})

      assert_same(
        fn x, w, b ->
          h = Nx.add(Nx.dot(x, w), b)

          {Nx.tanh(h) |> Nx.multiply(2) |> Nx.subtract(1), Nx.sum(Nx.transpose(h), axes: [1]),
           Nx.reshape(h, {9, 33})}
        end,
        [x, w, b]
      )
    end

    test "an MLP training step (grad, softmax, cross-entropy, SGD) gives the eager bits" do
      w1 = random({20, 16})
      b1 = random({16})
      w2 = random({16, 10})
      b2 = random({10})
      x = random({8, 20})
      y = Nx.eye(10) |> Nx.slice([0, 0], [8, 10]) |> Nx.as_type(:f32)
      {nw1, _, _, nb2} = assert_same(&sgd_step/6, [w1, b1, w2, b2, x, y])
      # (the MLP test itself: assert_same saw it compile to one program)
      assert Nx.shape(nw1) == {20, 16}
      step = Nx.Defn.jit(&sgd_step/6, compiler: Compiler)
      attach_compilations()
      step.(w1, b1, w2, b2, Nx.add(x, 1), y)
      refute_received {:compiled, _, _}
      assert Nx.shape(nw1) == {20, 16} and Nx.shape(nb2) == {10}
    end

    test "integer and f64 programs are bit-exact, with constants and iota" do
      a = Nx.iota({5, 7}, type: :s64) |> Nx.multiply(7_919) |> Nx.remainder(1_000)
      f = random({5, 7}, :f64)

      assert_same(
        fn a, f ->
          {a
           |> Nx.multiply(3)
           |> Nx.add(Nx.iota({5, 7}, type: :s64))
           |> Nx.quotient(7)
           |> Nx.bitwise_xor(0x55), Nx.sum(a, axes: [0]), Nx.cumulative_sum(f, axis: 1),
           Nx.argmax(f, axis: 1)}
        end,
        [a, f]
      )
    end

    test "views, size-1 axes and broadcast inputs" do
      x = random({4, 1, 6})
      t = Nx.transpose(random({6, 4}))
      wide = Nx.broadcast(random({6}), {4, 6})

      assert_same(
        fn x, t, wide ->
          {Nx.add(Nx.squeeze(x), Nx.multiply(t, wide)), Nx.sum(wide, axes: [0])}
        end,
        [x, t, wide]
      )
    end

    test "results that are inputs, constants or captured tensors" do
      c = Nx.backend_copy(random({3}))
      fun = fn x -> {x, c, Nx.tensor([1.5, 2.5]), Nx.multiply(x, c)} end
      x = random({3})
      {same, captured, constant, product} = Nx.Defn.jit(fun, compiler: Compiler).(x)
      assert bits(same) == bits(x)
      assert bits(captured) == bits(c)
      assert Nx.to_flat_list(constant) == [1.5, 2.5]
      assert bits(product) == bits(Nx.multiply(x, Nx.backend_copy(c, Nx.Vulkan.Backend)))
    end

    test "vectorized arguments and results" do
      x = random({3, 5}) |> Nx.vectorize(:batch)
      y = random({5})
      fun = fn x, y -> Nx.sum(Nx.multiply(x, y)) end
      result = Nx.Defn.jit(fun, compiler: Compiler).(x, y)
      expected = Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator).(x, y)
      assert result.vectorized_axes == [batch: 3]
      assert bits(result) == bits(expected)
    end

    test "container arguments and results (tuples and maps)" do
      a = random({3, 4})
      b = random({4})
      c = Nx.iota({3}, type: :s32)

      assert_same(
        fn {a, %{b: b}}, c -> %{sum: Nx.add(a, b), pair: {Nx.sum(c), Nx.negate(b)}} end,
        [{a, %{b: b}}, c]
      )
    end

    test "arguments on another backend are copied to the device" do
      x = Nx.tensor([1, 2, 3], type: :s32, backend: Nx.BinaryBackend)
      result = Nx.Defn.jit(&Nx.multiply(&1, 3), compiler: Compiler).(x)
      assert %Nx.Vulkan.Backend{} = result.data
      assert Nx.to_flat_list(result) == [3, 6, 9]
    end
  end

  describe "cache" do
    test "a cached call never traces again; new templates trace once each" do
      parent = self()

      fun =
        Nx.Defn.jit(
          fn x ->
            send(parent, :traced)
            Nx.add(Nx.exp(x), 1)
          end,
          compiler: Compiler
        )

      for _ <- 1..5, do: fun.(random({4}))
      assert_received :traced
      refute_received :traced

      fun.(random({5}))
      assert_received :traced
      fun.(random({4}, :f64))
      assert_received :traced
      for _ <- 1..3, do: fun.(random({5}))
      refute_received :traced
    end

    test "closures over other tensors of the same type and shape share one program" do
      attach_compilations()
      x = random({8})

      results =
        for _ <- 1..3 do
          # Closures capture tensors as data (Nx.backend_copy), which defn inlines as tensors.
          c = Nx.backend_copy(random({8}))
          result = Nx.Defn.jit(fn x -> Nx.multiply(Nx.sin(x), c) end, compiler: Compiler).(x)

          assert bits(result) ==
                   bits(Nx.multiply(Nx.sin(x), Nx.backend_copy(c, Nx.Vulkan.Backend)))

          result
        end

      assert length(Enum.uniq_by(results, &bits/1)) == 3
      assert_received {:compiled, _, %{mode: :program}}
      assert_received {:compiled, _, %{mode: :program, program_cache: :hit}}
      assert_received {:compiled, _, %{mode: :program, program_cache: :hit}}
    end

    test "Nx.Defn.compile compiles from templates alone" do
      parent = self()

      compiled =
        Nx.Defn.compile(
          fn a, b ->
            send(parent, :traced)
            Nx.dot(a, b) |> Nx.add(1)
          end,
          [Nx.template({3, 4}, :f32), Nx.template({4, 2}, :f32)],
          compiler: Compiler
        )

      assert_received :traced
      a = random({3, 4})
      b = random({4, 2})

      for _ <- 1..3 do
        assert bits(compiled.(a, b)) == bits(Nx.add(Nx.dot(a, b), 1))
      end

      refute_received :traced
      assert_raise ArgumentError, fn -> compiled.(random({3, 5}), b) end
    end

    test "recompiling one function warns at the 4th, 8th... compilation, naming what changed" do
      import ExUnit.CaptureLog
      fun = Nx.Defn.jit(fn x -> Nx.multiply(x, 2) end, compiler: Compiler)

      log =
        capture_log(fn ->
          for n <- 1..3, do: fun.(random({n}))
        end)

      refute log =~ "has compiled"
      log = capture_log(fn -> fun.(random({4})) end)
      assert log =~ "has compiled"
      assert log =~ "4 times"
      assert log =~ "argument tensor 0 changed its shape from {3} to {4}"

      # A closure made per call, over new values: the same templates, compiled again.
      log =
        capture_log(fn ->
          for i <- 1..8 do
            c = Nx.backend_copy(Nx.tensor(i * 1.0))
            Nx.Defn.jit(fn x -> Nx.add(x, c) end, compiler: Compiler).(Nx.tensor([1.0]))
          end
        end)

      assert log =~ "8 times"
      assert log =~ "only the closure changed"
    end

    @tag :tmp_dir
    test "cache: path stores the program, so a new VM compiles it without tracing", %{
      tmp_dir: dir
    } do
      attach_compilations()
      parent = self()
      path = Path.join(dir, "step.nxvk")
      c = Nx.backend_copy(random({6}))
      x = random({6})

      traced = fn ->
        Nx.Defn.jit(
          fn x ->
            send(parent, :traced)
            Nx.add(Nx.multiply(Nx.exp(x), c), 0.5)
          end,
          compiler: Compiler,
          cache: path
        )
      end

      want = traced.().(x)
      assert_received :traced
      assert_received {:compiled, _, %{disk_cache: :miss}}
      assert File.exists?(path)

      # A new VM: nothing cached in memory.
      :ets.delete_all_objects(Nx.Vulkan.Tables.compiled())
      Process.delete({Compiler, :local_cache})
      got = traced.().(x)
      refute_received :traced
      assert_received {:compiled, %{trace_time: 0}, %{disk_cache: :hit, mode: :program}}
      assert bits(got) == bits(want)

      # Other templates: traced again, with a warning naming what differs.
      log = ExUnit.CaptureLog.capture_log(fn -> traced.().(random({6}, :f64)) end)
      assert_received :traced
      assert log =~ "made for another arguments"
    end

    test "cache: false compiles every call; a bad cache option is an error" do
      parent = self()

      fun =
        Nx.Defn.jit(fn x -> send(parent, :traced) && Nx.negate(x) end,
          compiler: Compiler,
          cache: false
        )

      x = random({3})

      log =
        ExUnit.CaptureLog.capture_log(fn ->
          for _ <- 1..4, do: assert(bits(fun.(x)) == bits(Nx.negate(x)))
        end)

      for _ <- 1..4, do: assert_received(:traced)
      refute log =~ "has compiled"

      assert_raise ArgumentError, ~r/:cache option/, fn ->
        Nx.Defn.jit(&Nx.negate/1, compiler: Compiler, cache: 3).(x)
      end
    end

    test "100 processes call one function: one trace, every result right" do
      parent = self()

      fun =
        Nx.Defn.jit(
          fn x ->
            send(parent, :traced)
            Nx.subtract(Nx.multiply(x, x), 1)
          end,
          compiler: Compiler
        )

      1..100
      |> Task.async_stream(
        fn i ->
          x = Nx.tensor([i, i + 1], type: :s32)
          Nx.to_flat_list(fun.(x)) == [i * i - 1, (i + 1) * (i + 1) - 1]
        end,
        max_concurrency: 100,
        timeout: 120_000
      )
      |> Enum.each(fn {:ok, ok} -> assert ok end)

      assert_received :traced
      refute_received :traced
    end
  end

  describe "donation" do
    test "a donated argument's buffer holds its update; the argument is given up" do
      attach_compilations()

      step =
        Nx.Defn.jit(fn w, g -> {Nx.subtract(w, Nx.multiply(0.01, g)), Nx.sum(g)} end,
          compiler: Compiler
        )

      w = random({64, 33})
      g = random({64, 33})
      {want, _} = step.(Nx.backend_copy(w, Nx.Vulkan.Backend), g)
      donated = Nx.donatable(Nx.backend_copy(w, Nx.Vulkan.Backend))
      {got, sum} = step.(donated, g)
      # Without donation a run allocates the update and the sum; donated, the sum only.
      assert_received {:compiled, _, %{mode: :program, in_place: 0, run_bytes: undonated}}
      assert_received {:compiled, _, %{mode: :program, in_place: 1, run_bytes: donated_bytes}}
      assert undonated >= 64 * 33 * 4 + 4
      assert donated_bytes < undonated
      assert bits(got) == bits(want)
      assert bits(sum) == bits(Nx.sum(g))
      refute Nx.donatable?(got)
      assert inspect(donated) =~ "Deallocated due to buffer donation"
      assert_raise Nx.Vulkan.Error, ~r/deallocated/, fn -> Nx.to_binary(donated) end

      # Again and again on the last result, as a training loop does.
      {again, _} = step.(Nx.donatable(got), g)
      {want_again, _} = step.(want, g)
      assert bits(again) == bits(want_again)
    end

    test "Nx.Defn.compile with donatable templates" do
      t = Nx.template({8}, :f32)
      fun = Nx.Defn.compile(fn a, b -> Nx.add(a, b) end, [Nx.donatable(t), t], compiler: Compiler)
      a = random({8})
      b = random({8})
      want = Nx.add(a, b)
      assert bits(fun.(Nx.donatable(Nx.backend_copy(a, Nx.Vulkan.Backend)), b)) == bits(want)
    end

    test "EXLA's errors for donations that cannot be honoured" do
      fun = Nx.Defn.jit(fn a, b -> Nx.sum(Nx.add(a, b)) end, compiler: Compiler)

      assert_raise ArgumentError,
                   ~r/no output with matching shape \{4\} and type \{:f, 32\}/,
                   fn ->
                     fun.(Nx.donatable(random({4})), random({4}))
                   end

      unused = Nx.Defn.jit(fn a, _b -> Nx.exp(a) end, compiler: Compiler)

      assert_raise ArgumentError, ~r/not used by the computation/, fn ->
        unused.(random({4}), Nx.donatable(random({4})))
      end
    end
  end

  describe "callbacks and options" do
    test "partitions, backend and sharding" do
      assert [[max_concurrency: 2], [max_concurrency: 2]] =
               Compiler.__partitions_options__(max_concurrency: 2)

      assert [[device: 0]] = Compiler.__partitions_options__(device: 0)
      assert Compiler.__partitions_options__([]) != []
      assert {Nx.Vulkan.Backend, device: d} = Compiler.__to_backend__([])
      assert d == Nx.Vulkan.default_device()
      assert_raise ArgumentError, ~r/sharding/, fn -> Compiler.__shard_jit__(1, 2, 3, 4, 5, 6) end
    end

    test "bad options raise; unknown ones are accepted" do
      x = Nx.tensor([1.0])

      assert_raise ArgumentError, ~r/:native_fallback/, fn ->
        Nx.Defn.jit(&Nx.exp/1, compiler: Compiler, native_fallback: :maybe).(x)
      end

      assert_raise ArgumentError, ~r/:device/, fn ->
        Nx.Defn.jit(&Nx.exp/1, compiler: Compiler, device: -1).(x)
      end

      assert Nx.Defn.jit(&Nx.exp/1, compiler: Compiler, batch_keys: [:default], no_such: 1).(x)
    end

    test "Nx.Serving runs through the compiler" do
      serving =
        Nx.Serving.jit(&Nx.multiply(&1, 2), compiler: Compiler)
        |> Nx.Serving.process_options(batch_size: 4)

      batch = Nx.Batch.stack([Nx.tensor([1, 2]), Nx.tensor([3, 4])])
      assert Nx.to_flat_list(Nx.Serving.run(serving, batch)) == [2, 4, 6, 8]
    end

    test "Nx.Serving with partitions: true and batch keys, from several processes" do
      serving =
        Nx.Serving.jit(&Nx.add(&1, 1), compiler: Compiler)
        |> Nx.Serving.process_options(batch_size: 4, batch_keys: [:small, :large])

      name = :"#{__MODULE__}.Partitioned"

      start_supervised!(
        {Nx.Serving, serving: serving, name: name, partitions: true, batch_timeout: 10}
      )

      1..12
      |> Task.async_stream(fn i ->
        {key, shape} = if rem(i, 2) == 0, do: {:small, {2}}, else: {:large, {5}}
        x = Nx.broadcast(Nx.tensor(i, type: :s32), shape)
        batch = Nx.Batch.key(Nx.Batch.stack([x]), key)
        result = Nx.Serving.batched_run(name, batch)
        Nx.to_flat_list(result) == List.duplicate(i + 1, elem(shape, 0))
      end)
      |> Enum.each(fn {:ok, ok} -> assert ok end)
    end
  end
end

defmodule Nx.Vulkan.CompilerDoctestTest do
  # Nx's doctests with Nx.Vulkan.Compiler as the defn compiler (functions Nx implements with
  # defn, such as those of Nx.LinAlg, run through it), as EXLA runs them through EXLA.
  use Nx.Vulkan.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    Nx.Defn.default_options(compiler: Nx.Vulkan.Compiler)
    :ok
  end

  @rounding_error_doctests Nx.Vulkan.Test.Doctests.nx_rounding_exclusions()

  doctest Nx, except: [:moduledoc] ++ @rounding_error_doctests
end

defmodule Nx.Vulkan.CompilerLinAlgDoctestTest do
  use Nx.Vulkan.Case, async: true

  setup do
    Nx.default_backend(Nx.Vulkan.Backend)
    Nx.Defn.default_options(compiler: Nx.Vulkan.Compiler)
    :ok
  end

  @rounding_error_doctests Nx.Vulkan.Test.Doctests.linalg_rounding_exclusions()

  doctest Nx.LinAlg, except: [:moduledoc] ++ @rounding_error_doctests
end
