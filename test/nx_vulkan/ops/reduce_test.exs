defmodule Nx.Vulkan.Ops.ReduceTest do
  # The reduce family (engine/src/ops/reduce): reduce/5 with Elixir functions, traced into the
  # kernel's combiner (Nx.Vulkan.Combiner), with host fallback refused, against
  # Nx.BinaryBackend. The engine folds reduce in a tree, so integers are compared exactly for
  # functions whose result does not depend on the order of the fold (wrap-around arithmetic,
  # bitwise ops, max, a + b + 1), and floats within 1e-5 relative. Also: functions the
  # combiner cannot trace (for reduce and window_reduce) and the cache of traces.
  use Nx.Vulkan.Case, async: true
  import Nx.Vulkan.Test.CombinerHelpers

  setup do
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  defp functions do
    [
      {"add", &Nx.add/2},
      {"max", &Nx.max(&1, &2)},
      {"multiply", fn a, b -> Nx.multiply(a, b) end},
      {"a + b + 1", fn a, b -> Nx.add(Nx.add(a, b), 1) end},
      {"bitwise_xor", &Nx.bitwise_xor/2},
      {"bitwise_or of masks",
       fn a, b -> Nx.bitwise_or(Nx.bitwise_and(a, 0x7F), Nx.bitwise_and(b, 0x7F)) end},
      {"min through select", fn a, b -> Nx.select(Nx.less(a, b), a, b) end}
    ]
  end

  @shapes [
    {{}, []},
    {{300}, []},
    {{4, 1100}, [axes: [1]]},
    {{70, 3}, [axes: [0], keep_axes: true]},
    {{2, 3, 4}, [axes: [0, 2]]},
    {{70_000}, [axes: [0]]}
  ]

  test "reduce with integer functions matches Nx.BinaryBackend exactly" do
    Nx.Vulkan.with_host_fallback(:raise, fn ->
      for {name, fun} <- functions(),
          type <- [{:s, 32}, {:u, 8}, {:s, 64}, {:u, 16}],
          {shape, opts} <- @shapes,
          not (String.starts_with?(name, "multiply") and shape == {70_000}) do
        host = random(type, shape)
        # A typed accumulator: Nx.BinaryBackend needs every result in the tensor's type.
        acc =
          Nx.tensor(if(name == "multiply", do: 1, else: 3), type: type, backend: Nx.BinaryBackend)

        expected = on_host(fn -> Nx.reduce(host, acc, opts, fun) end)
        actual = Nx.reduce(on_device(host), acc, opts, fun)

        assert Nx.to_binary(actual) == Nx.to_binary(expected),
               "#{name} #{inspect(type)} #{inspect(shape)} #{inspect(opts)}"
      end
    end)
  end

  test "reduce with float functions and constants within tolerance" do
    Nx.Vulkan.with_host_fallback(:raise, fn ->
      funs = [
        &Nx.add/2,
        fn a, b -> Nx.max(a, b) end,
        fn a, b ->
          Nx.add(Nx.multiply(a, 0.5), Nx.multiply(b, 1.0)) |> Nx.add(Nx.multiply(a, 0.5))
        end
      ]

      # Nx.BinaryBackend sums f32 one by one: long rows drift from a tree's sum.
      for fun <- funs, type <- [{:f, 32}, {:f, 64}], {shape, opts} <- Enum.take(@shapes, 6) do
        host = random(type, shape)
        expected = on_host(fn -> Nx.reduce(host, 0.0, opts, fun) end)
        actual = Nx.reduce(on_device(host), 0.0, opts, fun)
        assert_same(expected, actual, 1.0e-3)
      end
    end)
  end

  test "reduce converts the tensor to the output type (u8 tensor, float accumulator)" do
    Nx.Vulkan.with_host_fallback(:raise, fn ->
      host = random({:u, 8}, {6, 7})
      expected = on_host(fn -> Nx.reduce(host, 0.5, [axes: [1]], &Nx.add/2) end)
      actual = Nx.reduce(on_device(host), 0.5, [axes: [1]], &Nx.add/2)
      assert_same(expected, actual, 1.0e-6)
    end)
  end

  test "functions without scalar expressions fall back visibly, naming the op" do
    t = Nx.iota({4, 4}, type: :s32)
    fun = fn a, b -> Nx.add(Nx.sum(Nx.reshape(a, {1})), b) end

    error =
      assert_raise Nx.Vulkan.Error, fn ->
        Nx.Vulkan.with_host_fallback(:raise, fn -> Nx.reduce(t, 0, fun) end)
      end

    assert error.message =~ "reduce"
    assert error.message =~ "reshape" or error.message =~ "sum"

    captured = Nx.iota({2}, backend: Nx.BinaryBackend)
    fun2 = fn a, b -> Nx.add(a, Nx.add(b, captured)) end

    assert_raise Nx.Vulkan.Error, fn ->
      Nx.Vulkan.with_host_fallback(:raise, fn -> Nx.window_reduce(t, 0, {2, 2}, fun2) end)
    end

    # On the host when allowed, with Nx.BinaryBackend's result.
    expected = on_host(fn -> Nx.reduce(Nx.backend_copy(t, Nx.BinaryBackend), 0, fun) end)

    assert Nx.to_binary(Nx.Vulkan.with_host_fallback(:allow, fn -> Nx.reduce(t, 0, fun) end)) ==
             Nx.to_binary(expected)
  end

  test "traces are cached per function and type, closures by their captured values" do
    k = 5
    fun = fn a, b -> Nx.add(Nx.add(a, b), k) end
    assert {:ok, text} = Nx.Vulkan.Combiner.trace(fun, {:s, 32})
    assert text =~ "s32#05000000"
    assert [{_, {:ok, ^text}}] = :ets.lookup(:nx_vulkan_combiners, {fun, {:s, 32}})

    k2 = 6
    fun2 = fn a, b -> Nx.add(Nx.add(a, b), k2) end
    assert {:ok, text2} = Nx.Vulkan.Combiner.trace(fun2, {:s, 32})
    assert text2 =~ "s32#06000000"

    t = Nx.iota({10}, type: :s32)

    assert Nx.to_number(Nx.Vulkan.with_host_fallback(:raise, fn -> Nx.reduce(t, 0, fun) end)) ==
             45 + 5 * 10

    assert Nx.to_number(Nx.Vulkan.with_host_fallback(:raise, fn -> Nx.reduce(t, 0, fun2) end)) ==
             45 + 6 * 10

    # A captured device tensor is neither traced nor cached.
    captured = Nx.tensor(1)
    fun3 = fn a, b -> Nx.add(Nx.add(a, b), captured) end
    assert {:error, _} = Nx.Vulkan.Combiner.trace(fun3, {:s, 32})
    assert :ets.lookup(:nx_vulkan_combiners, {fun3, {:s, 32}}) == []
  end
end
