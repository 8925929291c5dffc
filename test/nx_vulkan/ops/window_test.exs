defmodule Nx.Vulkan.Ops.WindowTest do
  # The window family (engine/src/ops/window): window_reduce/6 with Elixir functions, traced
  # into the kernel's combiner (Nx.Vulkan.Combiner), with host fallback refused, against
  # Nx.BinaryBackend. window_reduce folds each window in Nx's order, so any function matches.
  use Nx.Vulkan.Case, async: true
  import Nx.Vulkan.Test.CombinerHelpers

  setup do
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  test "window_reduce folds in Nx's order: any integer function matches" do
    Nx.Vulkan.with_host_fallback(:raise, fn ->
      funs = [
        fn a, b -> Nx.add(Nx.multiply(a, b), 1) end,
        &Nx.subtract/2,
        &Nx.max/2,
        fn a, b -> Nx.bitwise_xor(Nx.left_shift(a, 1), b) end
      ]

      cases = [
        {{2, 9, 11}, {1, 3, 3}, [padding: :same]},
        {{5, 13}, {2, 3}, [strides: [2, 1], window_dilations: [2, 2], padding: [{1, 0}, {0, 2}]]},
        {{3, 8, 6}, {1, 2, 2}, [strides: [1, 2, 2]]},
        {{40}, {7}, [padding: [{3, 3}], strides: 3]}
      ]

      # Nx.BinaryBackend calls the function on numbers (s32 results): s32 tensors only.
      for fun <- funs, {shape, window, opts} <- cases do
        type = {:s, 32}
        host = random(type, shape)
        expected = on_host(fn -> Nx.window_reduce(host, 2, window, opts, fun) end)
        actual = Nx.window_reduce(on_device(host), 2, window, opts, fun)
        assert_same(expected, actual)
      end
    end)
  end

  test "window_reduce on floats within tolerance" do
    Nx.Vulkan.with_host_fallback(:raise, fn ->
      host = random({:f, 32}, {2, 10, 12})
      fun = fn a, b -> Nx.add(a, Nx.multiply(b, 0.5)) end
      expected = on_host(fn -> Nx.window_reduce(host, 0.0, {1, 3, 3}, [padding: :same], fun) end)
      actual = Nx.window_reduce(on_device(host), 0.0, {1, 3, 3}, [padding: :same], fun)
      assert_same(expected, actual, 1.0e-5)
    end)
  end
end
