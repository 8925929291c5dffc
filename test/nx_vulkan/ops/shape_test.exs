defmodule Nx.Vulkan.Ops.ShapeTest do
  # The shape family (engine/src/ops/shape): dynamic slice/put_slice (start indices as
  # tensors, read and clamped on the device) against Nx.BinaryBackend, with host fallback
  # refused. Not async: one test asserts that the device's host-wait counter does not move.
  use Nx.Vulkan.Case, async: false
  import Nx.Defn
  import Nx.Vulkan.Test.OpsHelpers

  alias Nx.Vulkan.Test.Compare

  @index_types [u: 8, u: 16, u: 32, u: 64, s: 8, s: 16, s: 32, s: 64]

  setup do
    :rand.seed(:exsss, {7, 8, 9})
    :ok
  end

  # A start index of `type` holding `value` (wrapped into the type as Nx wraps it), on each backend.
  defp index(value, type) do
    {Nx.tensor(value, type: type), Nx.tensor(value, type: type, backend: Nx.BinaryBackend)}
  end

  defp starts_for({:u, bits}), do: [0, 1, 2, 3, 5, 100, Bitwise.bsl(1, bits) - 1]

  defp starts_for({:s, bits}),
    do: [0, 1, 2, 3, 5, 100, Bitwise.bsl(1, bits - 1) - 1, -1, -100, -Bitwise.bsl(1, bits - 1)]

  # Rows read at a loop counter (slice), written at a start computed from it (put_slice),
  # out-of-range counters clamped.
  defn rows_loop(t) do
    {_, _, acc} =
      while {t, i = 0, acc = Nx.broadcast(0.0, {3})}, i < 12 do
        row = Nx.slice(t, [i, 0], [1, 3]) |> Nx.reshape({3})
        {t, i + 1, Nx.put_slice(acc, [Nx.remainder(i, 2)], Nx.slice(row, [0], [2])) + row}
      end

    acc
  end

  describe "dynamic slice" do
    test "every index type, in-range, out-of-range and negative starts" do
      {t, h} = random_pair({:f, 32}, {6, 7})

      native(fn ->
        for type <- @index_types, a <- starts_for(type), b <- [0, 4, -3] do
          b = if elem(type, 0) == :u, do: abs(b), else: b
          {va, ha} = index(a, type)
          {vb, hb} = index(b, type)
          got = Nx.slice(t, [va, vb], [2, 3])
          want = ref(fn -> Nx.slice(h, [ha, hb], [2, 3]) end)
          assert Nx.to_binary(got) == Nx.to_binary(want), "#{inspect(type)} #{a} #{b}"
        end
      end)
    end

    test "u64 and s64 starts beyond 32 bits" do
      {t, h} = random_pair({:s, 16}, {5, 9})

      native(fn ->
        for {value, type} <- [
              {0xFFFFFFFFFFFFFFFF, {:u, 64}},
              {0x8000000000000003, {:u, 64}},
              {0x100000000, {:u, 64}},
              {0x100000000, {:s, 64}},
              {-0x100000000, {:s, 64}},
              {-0x8000000000000000, {:s, 64}},
              {0xFFFFFFFF, {:u, 32}},
              {-0x80000000, {:s, 32}}
            ] do
          {v, hv} = index(value, type)
          got = Nx.slice(t, [1, v], [3, 4])
          want = ref(fn -> Nx.slice(h, [1, hv], [3, 4]) end)
          assert Nx.to_binary(got) == Nx.to_binary(want), "#{inspect(type)} #{value}"
        end
      end)
    end

    test "strides, every element size, non-contiguous inputs and mixed static starts" do
      for type <- [u: 8, s: 16, f: 32, f: 64, c: 64, c: 128] do
        {t, h} = random_pair(type, {4, 6, 5})
        t = Nx.transpose(t, axes: [2, 0, 1])
        h = Nx.transpose(h, axes: [2, 0, 1])

        native(fn ->
          for a <- [-2, 0, 1, 3], c <- [0, 2, 9] do
            {va, ha} = index(a, {:s, 32})
            {vc, hc} = index(c, {:u, 8})
            got = Nx.slice(t, [va, 1, vc], [2, 3, 3], strides: [1, 2, 2])
            want = ref(fn -> Nx.slice(h, [ha, 1, hc], [2, 3, 3], strides: [1, 2, 2]) end)
            assert Nx.to_binary(got) == Nx.to_binary(want), "#{inspect(type)} #{a} #{c}"
          end
        end)
      end
    end

    test "put_slice with tensor starts" do
      for type <- [u: 8, bf: 16, f: 32, s: 64, c: 64] do
        {t, h} = random_pair(type, {5, 6})
        {u, hu} = random_pair(type, {2, 3})
        u = Nx.transpose(Nx.reshape(u, {3, 2}))
        hu = Nx.transpose(Nx.reshape(hu, {3, 2}))

        native(fn ->
          for it <- @index_types, a <- starts_for(it), b <- [0, 2, 5] do
            {va, ha} = index(a, it)
            {vb, hb} = index(b, {:s, 32})
            got = Nx.put_slice(t, [va, vb], u)
            want = ref(fn -> Nx.put_slice(h, [ha, hb], hu) end)

            assert Nx.to_binary(got) == Nx.to_binary(want),
                   "#{inspect(type)} #{inspect(it)} #{a} #{b}"
          end
        end)
      end
    end

    test "put_slice converts the slice's type" do
      {t, h} = random_pair({:f, 32}, {4, 4})
      {u, hu} = random_pair({:s, 8}, {2, 2})
      {v, hv} = index(3, {:u, 16})

      native(fn ->
        got = Nx.put_slice(t, [v, 1], u)
        assert Nx.to_binary(got) == Nx.to_binary(ref(fn -> Nx.put_slice(h, [hv, 1], hu) end))
      end)
    end

    test "inside a Nx.Defn while loop" do
      {t, h} = random_pair({:f, 32}, {10, 3})
      jit = Nx.Defn.jit(&rows_loop/1, compiler: Nx.Defn.Evaluator)
      got = native(fn -> jit.(t) end)
      want = Nx.with_default_backend(Nx.BinaryBackend, fn -> jit.(h) end)
      assert :ok == Compare.compare({:f, 32}, Nx.to_binary(want), Nx.to_binary(got), 0)
    end

    test "records without waiting for the start index" do
      {t, h} = random_pair({:f, 32}, {8, 8})
      # A start computed on the device: reading it on the host would wait for the GPU.
      i = Nx.add(Nx.tensor(1, type: :s32), Nx.tensor(2, type: :s32))
      before = Nx.Vulkan.stream_statistics()

      {s, p} =
        native(fn ->
          {Nx.slice(t, [i, 2], [3, 4]), Nx.put_slice(t, [2, i], Nx.iota({2, 2}, type: :f32))}
        end)

      assert Nx.Vulkan.stream_statistics().waits == before.waits
      assert Nx.to_binary(s) == Nx.to_binary(ref(fn -> Nx.slice(h, [3, 2], [3, 4]) end))
      want_p = ref(fn -> Nx.put_slice(h, [2, 3], Nx.iota({2, 2}, type: :f32)) end)
      assert Nx.to_binary(p) == Nx.to_binary(want_p)
    end
  end
end
