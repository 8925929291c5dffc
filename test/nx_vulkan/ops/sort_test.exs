defmodule Nx.Vulkan.Ops.SortTest do
  # The sort family (engine/src/ops/sort): Nx.top_k (the TopK block) against Nx.BinaryBackend,
  # with host fallback refused.
  use Nx.Vulkan.Case, async: true
  import Nx.Vulkan.Test.OpsHelpers

  alias Nx.Vulkan.Test.Compare

  @sortable_types [u: 8, u: 16, u: 32, u: 64, s: 8, s: 16, s: 32, s: 64] ++
                    [f: 16, bf: 16, f: 32, f: 64, f: 8, f8_e4m3fn: 8]

  setup do
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  describe "top_k" do
    test "every sortable type, k from 1 to the axis size, NaN and ties" do
      for type <- @sortable_types,
          {shape, ks} <- [{{3, 17}, [1, 5, 17]}, {{2, 2, 64}, [1, 8, 64]}, {{9}, [9]}] do
        {t, h} = random_pair(type, shape)

        for k <- ks do
          {values, indices} = native(fn -> Nx.top_k(t, k: k) end)
          {want_v, want_i} = Nx.top_k(h, k: k)
          assert indices.type == {:s, 32}

          assert Nx.to_binary(indices) == Nx.to_binary(want_i),
                 "#{inspect(type)} #{inspect(shape)} k=#{k}"

          assert :ok == Compare.compare(type, Nx.to_binary(want_v), Nx.to_binary(values), 0),
                 "#{inspect(type)} #{inspect(shape)} k=#{k}"
        end
      end
    end

    test "ties keep the lower index first and -0.0 equals 0.0" do
      t = Nx.tensor([[0.0, -0.0, 1.0, 1.0, :nan, 0.0, :neg_infinity, :nan]])
      {values, indices} = native(fn -> Nx.top_k(t, k: 8) end)
      {want_v, want_i} = Nx.top_k(to_host(t), k: 8)
      assert Nx.to_binary(indices) == Nx.to_binary(want_i)
      assert Nx.to_binary(values) == Nx.to_binary(want_v)
    end

    test "rows longer than the shared-memory sort run through the block's default, natively" do
      {t, h} = random_pair({:f, 32}, {2, 3000})
      {values, indices} = native(fn -> Nx.top_k(t, k: 4) end)
      {want_v, want_i} = Nx.top_k(h, k: 4)
      assert Nx.to_binary(indices) == Nx.to_binary(want_i)
      assert Nx.to_binary(values) == Nx.to_binary(want_v)
    end
  end
end
