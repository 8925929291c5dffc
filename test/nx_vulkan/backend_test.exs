defmodule Nx.Vulkan.BackendTest do
  # Nx.Vulkan.Backend against Nx.BinaryBackend on random inputs (NaN, Inf and -0.0 among
  # them), plus transfers, fallbacks and errors.
  use Nx.Vulkan.Case, async: true

  import ExUnit.CaptureLog
  import Bitwise
  alias Nx.Vulkan.Test.Compare

  @engine_types [u: 8, u: 16, u: 32, u: 64, s: 8, s: 16, s: 32, s: 64] ++
                  [f: 16, bf: 16, f: 32, f: 64, c: 64, c: 128, f: 8, f8_e4m3fn: 8]

  setup do
    :rand.seed(:exsss, {1, 2, 3})
    :ok
  end

  defp vk(binary, type, shape) do
    Nx.from_binary(binary, type, backend: Nx.Vulkan.Backend) |> Nx.reshape(shape)
  end

  defp host(binary, type, shape) do
    Nx.from_binary(binary, type, backend: Nx.BinaryBackend) |> Nx.reshape(shape)
  end

  defp bytes(tensor), do: Nx.to_binary(tensor)

  describe "binaries" do
    test "round trip is byte-exact for every type (NaN payloads, -0.0)" do
      for type <- @engine_types do
        {_, bits} = type
        n = 37

        data =
          if elem(type, 0) in [:f, :bf] and bits > 8,
            do: Compare.random_binary(type, n),
            else: :rand.bytes(div(n * bits, 8))

        t = Nx.from_binary(data, type, backend: Nx.Vulkan.Backend)
        assert %Nx.Vulkan.Backend{} = t.data
        assert Nx.to_binary(t) == data, "round trip of #{inspect(type)}"
      end
    end

    test "types the engine does not know travel as raw bytes" do
      for type <- [{:u, 4}, {:s, 2}] do
        {_, bits} = type
        data = for _ <- 1..7, into: <<>>, do: <<:rand.uniform(1 <<< bits) - 1::size(bits)>>
        t = Nx.from_binary(data, type, backend: Nx.Vulkan.Backend)
        assert Nx.to_binary(t) == data
        assert Nx.to_binary(t, limit: 3) == Nx.to_binary(host(data, type, {7}), limit: 3)
      end
    end

    test "to_binary with a limit" do
      t = Nx.iota({4, 5}, type: :s32)
      expected = Nx.iota({4, 5}, type: :s32, backend: Nx.BinaryBackend) |> Nx.to_binary()
      assert Nx.to_binary(t, limit: 7) == binary_part(expected, 0, 28)
      assert Nx.to_binary(t, limit: 100) == expected
      assert Nx.to_binary(t, limit: 0) == ""
    end
  end

  # Element-wise ops compared with Nx.BinaryBackend. Tolerances in ulps of the output.
  @binary_ops [add: 0, subtract: 0, multiply: 0, divide: 0, max: 0, min: 0]
  @unary_ops [negate: 0, exp: 4, log: 4]
  @numeric_types [u: 8, u: 32, s: 8, s: 32, s: 64, f: 16, bf: 16, f: 32, f: 64]

  describe "element-wise ops match Nx.BinaryBackend" do
    # Several tests below compute on the device outside check/3 (which refuses fallbacks
    # itself): refused for the whole block, whatever NX_VULKAN_HOST_FALLBACK says.
    @describetag fallback: :raise

    for {op, ulps} <- @binary_ops, type <- @numeric_types do
      test "#{op} #{inspect(type)}, finite random inputs with broadcasting" do
        type = unquote(type)
        op = unquote(op)
        # As the conformance fixtures: bf16 at least 1 ulp; 2 ulps for a float result of
        # integer inputs that the float type cannot hold exactly (divide).
        ulps =
          unquote(
            cond do
              elem(type, 0) == :bf -> max(1, ulps)
              elem(type, 0) in [:s, :u] and op == :divide -> max(2, ulps)
              true -> ulps
            end
          )

        for {ls, rs} <- [{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 1, 3}, {2, 3}}, {{5}, {}}] do
          l = random(type, ls)
          r = random(type, rs, nonzero: unquote(op == :divide))
          check(op, [l, r], ulps)
        end
      end
    end

    for {op, ulps} <- @unary_ops, type <- @numeric_types do
      test "#{op} #{inspect(type)}" do
        type = unquote(type)
        op = unquote(op)
        ulps = unquote(if elem(type, 0) == :bf, do: max(1, ulps), else: ulps)
        # exp/log on [0.01, 10): no overflow (Nx.BinaryBackend raises on it), no log of <= 0.
        check(op, [random(type, {4, 6}, positive: true, max: 10)], ulps)
      end
    end

    for type <- [{:f, 8}, {:f8_e4m3fn, 8}] do
      test "#{inspect(type)}: every byte read, written and computed on as Nx.BinaryBackend" do
        type = unquote(type)
        all = for b <- 0..255, into: <<>>, do: <<b>>
        {t, h} = {vk(all, type, {256}), host(all, type, {256})}
        {rt, rh} = {Nx.reverse(t), Nx.reverse(h)}

        assert :ok ==
                 Compare.compare({:f, 32}, bytes(Nx.as_type(h, :f32)), bytes(Nx.as_type(t, :f32)))

        wide = Nx.multiply(Nx.as_type(h, :f32), 1.37)

        assert :ok ==
                 Compare.compare(
                   type,
                   bytes(Nx.as_type(wide, type)),
                   bytes(Nx.as_type(to_vk(wide), type))
                 )

        for op <- [:add, :subtract, :multiply, :max, :less] do
          expected = apply(Nx, op, [h, rh])
          actual = apply(Nx, op, [t, rt])
          assert actual.type == expected.type

          assert :ok == Compare.compare(expected.type, bytes(expected), bytes(actual)),
                 "#{op} on #{inspect(type)}"
        end

        # Computed in f32 where Nx computes in f64: one step of the 8-bit format. Finite inputs
        # only (Nx.BinaryBackend gives NaN for tanh(Inf)).
        finite = for <<b <- all>>, Compare.finite?(type, b), into: <<>>, do: <<b>>
        n = byte_size(finite)
        {t, h} = {vk(finite, type, {n}), host(finite, type, {n})}

        for op <- [:sin, :tanh, :atan] do
          assert :ok ==
                   Compare.compare(type, bytes(apply(Nx, op, [h])), bytes(apply(Nx, op, [t])), 1),
                 "#{op} on #{inspect(type)}"
        end
      end
    end

    test "mixed input types (promotion done by Nx)" do
      check(:add, [random({:s, 32}, {3}), random({:f, 32}, {3})], 0)
      check(:multiply, [random({:u, 8}, {2, 3}), random({:s, 16}, {3})], 0)
      check(:subtract, [random({:f, 16}, {4}), random({:f, 64}, {4})], 0)
    end

    test "scalars from Nx.BinaryBackend and numbers are moved to the device" do
      t = random({:f, 32}, {5})
      s = Nx.tensor(2.5, backend: Nx.BinaryBackend)
      r = Nx.multiply(t, s)
      assert %Nx.Vulkan.Backend{} = r.data
      check(:multiply, [t, s], 0)
      assert Nx.to_binary(Nx.add(t, 1)) == Nx.to_binary(Nx.add(to_host(t), 1))
    end

    for type <- [f: 16, bf: 16, f: 32, f: 64], op <- [:add, :subtract, :multiply, :max, :min] do
      test "#{op} #{inspect(type)} with NaN, Inf and -0.0" do
        check_specials(unquote(op), unquote(type))
      end
    end

    for type <- [f: 16, bf: 16, f: 32, f: 64], op <- [:negate, :exp] do
      test "#{op} #{inspect(type)} with NaN, Inf and -0.0" do
        check_specials(unquote(op), unquote(type))
      end
    end

    test "as_type between types" do
      types = [u: 8, s: 16, s: 32, u: 32, s: 64, f: 16, bf: 16, f: 32, f: 64, c: 64]

      for from <- types, to <- types do
        # Float -> integer is only defined by Nx for values in range: stay within [0, 100).
        t =
          case from do
            {:c, _} -> Nx.complex(random({:f, 32}, {6}), random({:f, 32}, {6}))
            _ -> random(from, {6}, positive: true, max: 100)
          end

        if not match?({:c, _}, from) or match?({:c, _}, to) do
          expected = Nx.as_type(to_host(t), to)
          actual = Nx.as_type(t, to)
          assert actual.type == to

          assert :ok == Compare.compare(to, bytes(expected), bytes(actual)),
                 "as_type #{inspect(from)} -> #{inspect(to)}"
        end
      end
    end
  end

  describe "conv" do
    # Host fallback refused: a silent fallback would compare Nx.BinaryBackend with itself.
    # Nx.BinaryBackend's conv against ours, host fallback refused.
    defp assert_conv_matches_binary(x, k, opts) do
      expected = Nx.with_default_backend(Nx.BinaryBackend, fn -> Nx.conv(x, k, opts) end)

      Nx.Vulkan.with_host_fallback(:raise, fn ->
        actual =
          Nx.conv(
            Nx.backend_copy(x, Nx.Vulkan.Backend),
            Nx.backend_copy(k, Nx.Vulkan.Backend),
            opts
          )

        assert_close(expected, actual)
      end)
    end

    defp conv_inputs(input_shape, kernel_shape) do
      x = Nx.iota(input_shape, type: :f32, backend: Nx.BinaryBackend) |> Nx.sin()
      k = Nx.iota(kernel_shape, type: :f32, backend: Nx.BinaryBackend) |> Nx.cos()
      {x, k}
    end

    defp assert_close(expected, actual, atol \\ 1.0e-4) do
      assert Nx.shape(expected) == Nx.shape(actual)
      actual = Nx.backend_transfer(actual, Nx.BinaryBackend)
      assert Nx.all_close(expected, actual, atol: atol, rtol: 1.0e-4) |> Nx.to_number() == 1
    end

    # The gradients of `loss` by Nx.BinaryBackend and by ours (host fallback refused), compared
    # by `assert_fun`.
    defp assert_grad_matches_binary(x, k, loss, assert_fun) do
      {dx, dk} =
        Nx.with_default_backend(Nx.BinaryBackend, fn ->
          Nx.Defn.grad({x, k}, fn {x, k} -> loss.(x, k) end)
        end)

      Nx.Vulkan.with_host_fallback(:raise, fn ->
        vx = Nx.backend_copy(x, Nx.Vulkan.Backend)
        vk = Nx.backend_copy(k, Nx.Vulkan.Backend)
        {vdx, vdk} = Nx.Defn.grad({vx, vk}, fn {x, k} -> loss.(x, k) end)
        assert_fun.(dx, vdx)
        assert_fun.(dk, vdk)
      end)
    end

    # f32 sums of hundreds of products of values in the thousands (a gradient's): an absolute
    # tolerance of 1e-5 of the largest value (ours and Nx.BinaryBackend's differ by under 1e-6).
    defp assert_close_to_scale(expected, actual) do
      scale = expected |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
      assert_close(expected, actual, 1.0e-5 * scale)
    end

    test "every option, natively, against Nx.BinaryBackend" do
      {x, k} = conv_inputs({4, 6, 7, 5}, {6, 3, 3, 2})

      opts = [
        strides: [2, 1],
        padding: [{1, 2}, {0, -1}],
        input_dilation: [2, 1],
        kernel_dilation: [1, 2],
        feature_group_size: 2
      ]

      assert_conv_matches_binary(x, k, opts)
    end

    test "channels last with permutations and batch groups" do
      {x, k} = conv_inputs({4, 6, 6, 3}, {2, 2, 3, 4})

      opts = [
        padding: :same,
        batch_group_size: 2,
        input_permutation: [0, 3, 1, 2],
        kernel_permutation: [3, 2, 0, 1],
        output_permutation: [0, 3, 1, 2]
      ]

      assert_conv_matches_binary(x, k, opts)
    end

    # 64 channels and filters: GPUs take Winograd's tier for it (conv_winograd.hpp; the engine
    # tests force it on lavapipe, as NX_VULKAN_CONV_WINOGRAD=1 in the environment does here).
    test "a 3x3 conv of 64 channels and filters, channels first and last, and its gradient" do
      {x, k} = conv_inputs({2, 64, 6, 6}, {64, 64, 3, 3})
      assert_conv_matches_binary(x, k, padding: :same)

      {x, k} = conv_inputs({2, 6, 6, 64}, {3, 3, 64, 64})

      assert_conv_matches_binary(x, k,
        padding: [{0, 1}, {1, 1}],
        input_permutation: [0, 3, 1, 2],
        kernel_permutation: [3, 2, 0, 1],
        output_permutation: [0, 3, 1, 2]
      )

      {x, k} = conv_inputs({1, 64, 4, 4}, {64, 64, 3, 3})
      loss = fn x, k -> Nx.sum(Nx.pow(Nx.conv(x, k, padding: :same), 2)) end
      assert_grad_matches_binary(x, k, loss, &assert_close_to_scale/2)
    end

    test "gradients (batch groups and input dilation in Nx's conv gradient)" do
      {x, k} = conv_inputs({2, 3, 7, 6}, {4, 3, 3, 3})
      loss = fn x, k -> Nx.sum(Nx.pow(Nx.conv(x, k, strides: [2, 1], padding: :same), 2)) end
      assert_grad_matches_binary(x, k, loss, &assert_close/2)
    end
  end

  describe "fallbacks" do
    # Allowed: the test is about the fallback itself (its counter and telemetry event), on a
    # window_reduce the engine cannot run.
    @tag fallback: :allow
    test "run on the host, are counted and emit telemetry" do
      ref = make_ref()
      parent = self()

      :telemetry.attach(
        "fallback-test-#{inspect(ref)}",
        [:nx_vulkan, :host_fallback],
        fn _event, measurements, metadata, _ -> send(parent, {ref, measurements, metadata}) end,
        nil
      )

      try do
        # window_reduce with a function the engine cannot combine (sum has no scalar
        # expression): always on the host.
        t = Nx.iota({4}, type: :f32)
        before = Map.get(Nx.Vulkan.fallback_counts(), :window_reduce, 0)

        result =
          Nx.window_reduce(t, 0, {2}, [strides: [1]], fn x, acc -> Nx.add(Nx.sum(x), acc) end)

        assert %Nx.Vulkan.Backend{} = result.data
        assert Nx.to_flat_list(result) == [1.0, 3.0, 5.0]
        assert Map.get(Nx.Vulkan.fallback_counts(), :window_reduce, 0) >= before + 1
        assert_receive {^ref, %{count: 1}, %{op: :window_reduce}}
      after
        :telemetry.detach("fallback-test-#{inspect(ref)}")
      end
    end

    test ":raise raises with the op name" do
      t = Nx.iota({3}, type: :f32)

      Nx.Vulkan.with_host_fallback(:raise, fn ->
        error =
          assert_raise Nx.Vulkan.Error, fn ->
            Nx.reduce(t, 0, fn x, acc -> Nx.add(Nx.sum(x), acc) end)
          end

        assert error.kind == :unsupported
        assert error.message =~ "reduce"
      end)
    end

    test ":warn warns once per op" do
      Nx.Vulkan.with_host_fallback(:warn, fn ->
        t = Nx.iota({3}, type: :f32)
        fun = fn x, acc -> Nx.max(Nx.sum(x), acc) end
        # Another test may have warned for :reduce already; then no warning at all.
        log1 = capture_log(fn -> Nx.reduce(t, 0, fun) end)
        log2 = capture_log(fn -> Nx.reduce(t, 0, fun) end)
        refute log2 =~ "reduce runs on the host"
        assert log1 == "" or log1 =~ "reduce runs on the host"
      end)
    end

    # Allowed: the test is about what the fallback does with its inputs. Nx.sum inside the
    # function has no scalar expression, so this reduce runs on the host (a plain add is traced
    # into the kernel's combiner and would not reach the fallback).
    @tag fallback: :allow
    test "inputs are copied, not moved, to the host" do
      t = Nx.iota({2, 3}, type: :f32)
      before = Map.get(Nx.Vulkan.fallback_counts(), :reduce, 0)
      _ = Nx.reduce(t, 0, fn x, acc -> Nx.add(Nx.sum(x), acc) end)
      assert Map.get(Nx.Vulkan.fallback_counts(), :reduce, 0) >= before + 1
      assert Nx.to_flat_list(t) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    end

    test "block results come back to the device" do
      t = Nx.tensor([[4.0, 2.0], [2.0, 3.0]])
      l = Nx.LinAlg.cholesky(t)
      assert %Nx.Vulkan.Backend{} = l.data
      expected = Nx.LinAlg.cholesky(to_host(t))
      assert :ok == Compare.compare({:f, 32}, bytes(expected), bytes(l), 8)
    end
  end

  describe "transfers" do
    test "backend_transfer to the same device is the same tensor" do
      t = Nx.tensor([1, 2, 3])
      assert Nx.backend_transfer(t, Nx.Vulkan.Backend) == t
      assert Nx.backend_transfer(t, {Nx.Vulkan.Backend, device: t.data.device}) == t
    end

    test "backend_transfer to another backend deallocates" do
      t = Nx.tensor([1, 2, 3])
      h = Nx.backend_transfer(t, Nx.BinaryBackend)
      assert %Nx.BinaryBackend{} = h.data
      assert Nx.to_flat_list(h) == [1, 2, 3]
      assert Nx.backend_deallocate(t) == :already_deallocated
    end

    test "backend_copy keeps the original" do
      t = Nx.tensor([1.5, -0.0])
      c = Nx.backend_copy(t, Nx.Vulkan.Backend)
      assert c.data.ref != t.data.ref
      assert Nx.to_binary(c) == Nx.to_binary(t)
      h = Nx.backend_copy(t, Nx.BinaryBackend)
      assert Nx.to_binary(h) == Nx.to_binary(t)
      assert Nx.to_flat_list(t) == [1.5, -0.0]
    end

    test "from other backends with a device option" do
      d = Nx.Vulkan.default_device()

      t =
        Nx.tensor([1, 2], backend: Nx.BinaryBackend)
        |> Nx.backend_transfer({Nx.Vulkan.Backend, device: d})

      assert t.data.device == d
      t = Nx.tensor([1, 2], backend: {Nx.Vulkan.Backend, device: d})
      assert t.data.device == d
    end

    test "deallocate really frees, and later use raises" do
      t = Nx.iota({256}, type: :f32)
      assert Nx.backend_deallocate(t) == :ok
      assert Nx.backend_deallocate(t) == :already_deallocated

      error = assert_raise Nx.Vulkan.Error, fn -> Nx.to_binary(t) end
      assert error.kind == :deallocated
      assert error.message =~ "deallocated"

      assert_raise Nx.Vulkan.Error, ~r/deallocated/, fn -> Nx.add(t, t) end
      assert inspect(t) =~ "Deallocated"
    end

    test "to_batched" do
      t = Nx.iota({5, 2})
      batches = Nx.to_batched(t, 2, leftover: :repeat) |> Enum.to_list()
      assert length(batches) == 3
      assert Nx.to_flat_list(List.last(batches)) == [8, 9, 0, 1]
      assert [_, _] = Nx.to_batched(t, 2, leftover: :discard) |> Enum.to_list()
    end

    test "pointers are not supported" do
      assert_raise ArgumentError, ~r/not support/, fn -> Nx.to_pointer(Nx.tensor([1])) end
    end
  end

  describe "errors and API" do
    test "every Nx.Backend callback is implemented" do
      callbacks = Nx.Backend.behaviour_info(:callbacks)
      assert length(callbacks) >= 115
      assert callbacks -- Nx.Vulkan.Backend.__info__(:functions) == []
    end

    test "invalid device options raise ArgumentError" do
      assert_raise ArgumentError, fn ->
        Nx.tensor([1], backend: {Nx.Vulkan.Backend, device: -1})
      end

      assert_raise ArgumentError, fn -> Nx.tensor([1], backend: {Nx.Vulkan.Backend, foo: 1}) end
    end

    test "a device index with no device raises" do
      assert_raise ArgumentError, fn ->
        Nx.tensor([1], backend: {Nx.Vulkan.Backend, device: 1000})
      end
    end

    test "devices and memory statistics" do
      [first | _] = devices = Nx.Vulkan.devices()
      assert is_binary(first.name)
      assert Enum.any?(devices, &(&1.index == Nx.Vulkan.default_device()))
      stats = Nx.Vulkan.memory_statistics()
      assert %{bytes_in_use: _, peak_bytes: _, buffers: _} = stats
      assert :ok == Nx.Vulkan.reset_peak_memory()
      assert is_list(Nx.Vulkan.native_ops())
    end
  end

  ## Helpers

  defp to_host(t), do: Nx.backend_copy(t, Nx.BinaryBackend)
  defp to_vk(t), do: Nx.backend_copy(t, Nx.Vulkan.Backend)

  defp random(type, shape, opts \\ []) do
    n = Tuple.product(shape)
    host = random_host(type, n, opts)
    Nx.backend_transfer(Nx.reshape(host, shape), Nx.Vulkan.Backend)
  end

  defp random_host({kind, _} = type, n, opts) do
    max = Keyword.get(opts, :max, if(kind in [:f, :bf], do: 100, else: nil))

    values =
      for _ <- 1..max(n, 1)//1 do
        case kind do
          k when k in [:f, :bf] ->
            v =
              if opts[:positive] == true,
                do: :rand.uniform() * max + 0.01,
                else: (:rand.uniform() - 0.5) * 2 * max

            if opts[:nonzero] == true and abs(v) < 0.01, do: 1.0, else: v

          :u ->
            {_, bits} = type
            top = if max, do: min(max, 1 <<< bits), else: 1 <<< bits
            v = :rand.uniform(top) - 1
            if opts[:nonzero] == true and v == 0, do: 1, else: v

          :s ->
            {_, bits} = type
            top = if max, do: min(max, 1 <<< (bits - 1)), else: 1 <<< (bits - 1)
            v = :rand.uniform(2 * top) - 1 - top
            v = if opts[:positive] == true, do: abs(v), else: v
            if opts[:nonzero] == true and v == 0, do: 1, else: v
        end
      end

    values = Enum.take(values, n)
    Nx.tensor(values, type: type, backend: Nx.BinaryBackend) |> Nx.reshape({n})
  end

  # Host fallback refused: a fallback would compare Nx.BinaryBackend with itself.
  defp check(op, inputs, ulps) do
    actual = Nx.Vulkan.with_host_fallback(:raise, fn -> apply(Nx, op, inputs) end)
    expected = apply(Nx, op, Enum.map(inputs, &to_host/1))
    assert actual.type == expected.type
    assert actual.shape == expected.shape

    result = Compare.compare(expected.type, bytes(expected), bytes(actual), ulps)

    assert :ok == result,
           "#{op} on #{Enum.map_join(inputs, ", ", &inspect(&1.type))}: #{inspect(result)} " <>
             "inputs #{inspect(Enum.map(inputs, &Nx.to_flat_list/1), limit: 8)}"
  end

  # Inputs with special values, on the device with host fallback refused; the reference is
  # computed element by element on Nx.BinaryBackend, skipping the elements where it raises (it
  # cannot do 1.0/0.0 and a few other IEEE cases).
  defp check_specials(op, {_, bits} = type) do
    size = div(bits, 8)
    n = 25
    specials = for i <- 0..4, into: <<>>, do: Compare.special(type, i)
    finite = Compare.random_binary(type, n - 5, specials: false)
    a = specials <> finite
    b = Compare.random_binary(type, 20, specials: false) <> specials
    arity = if op in [:negate, :exp], do: 1, else: 2

    # Every pair of specials, too.
    {a, b} =
      if arity == 2 do
        pairs = for i <- 0..4, j <- 0..4, do: {Compare.special(type, i), Compare.special(type, j)}
        {a <> Enum.map_join(pairs, &elem(&1, 0)), b <> Enum.map_join(pairs, &elem(&1, 1))}
      else
        {a, b}
      end

    count = div(byte_size(a), size)
    inputs = if arity == 2, do: [a, b], else: [a]

    actual =
      Nx.Vulkan.with_host_fallback(:raise, fn ->
        apply(Nx, op, Enum.map(inputs, &vk(&1, type, {count})))
      end)
      |> bytes()

    out_size = div(byte_size(actual), count)

    for i <- 0..(count - 1) do
      args = Enum.map(inputs, &host(binary_part(&1, i * size, size), type, {}))

      case safe(fn -> apply(Nx, op, args) end) do
        {:ok, expected} ->
          got = binary_part(actual, i * out_size, out_size)

          result =
            Compare.compare(expected.type, bytes(expected), got, if(op == :exp, do: 4, else: 0))

          assert :ok == result,
                 "#{op} #{inspect(type)} element #{i}: inputs #{inspect(Enum.map(args, &bytes/1))}" <>
                   " expected #{inspect(bytes(expected))} got #{inspect(got)}"

        :error ->
          :skip
      end
    end
  end

  defp safe(fun) do
    {:ok, fun.()}
  rescue
    _ -> :error
  end
end

defmodule Nx.Vulkan.InspectSettingTest do
  # Not async: it changes an application setting that the async doctests' inspect reads.
  use Nx.Vulkan.Case, async: false

  test "inspect with and without the backend" do
    t = Nx.tensor([1, 2, 3])
    assert inspect(t) =~ "[1, 2, 3]"
    Application.put_env(:nx_vulkan, :add_backend_on_inspect, true)

    try do
      assert inspect(t) =~ "Nx.Vulkan.Backend<vulkan:"
    after
      Application.delete_env(:nx_vulkan, :add_backend_on_inspect)
    end
  end
end
