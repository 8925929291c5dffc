defmodule Nx.Vulkan.Ops.ConvTest do
  # The conv family (engine/src/ops/conv) against Nx.BinaryBackend: every option, the Winograd
  # tier's shapes and gradients, host fallback refused.
  use Nx.Vulkan.Case, async: true

  setup do
    :rand.seed(:exsss, {1, 2, 3})
    :ok
  end

  describe "conv" do
    # Nx.BinaryBackend's conv against ours, host fallback refused: a silent fallback would
    # compare Nx.BinaryBackend with itself.
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
end
