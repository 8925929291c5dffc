defmodule Nx.Vulkan.Ops.ElementwiseTest do
  # The elementwise family (engine/src/ops/elementwise) against Nx.BinaryBackend on random
  # inputs (NaN, Inf and -0.0 among them), host fallback refused.
  use Nx.Vulkan.Case, async: true

  import Nx.Vulkan.Test.OpsHelpers
  alias Nx.Vulkan.Test.Compare

  # Several tests below compute on the device outside check/3 (which refuses fallbacks
  # itself): refused for the whole module, whatever NX_VULKAN_HOST_FALLBACK says.
  @moduletag fallback: :raise

  setup do
    :rand.seed(:exsss, {1, 2, 3})
    :ok
  end

  # Element-wise ops compared with Nx.BinaryBackend. Tolerances in ulps of the output.
  @binary_ops [add: 0, subtract: 0, multiply: 0, divide: 0, max: 0, min: 0]
  @unary_ops [negate: 0, exp: 4, log: 4]
  @numeric_types [u: 8, u: 32, s: 8, s: 32, s: 64, f: 16, bf: 16, f: 32, f: 64]

  describe "element-wise ops match Nx.BinaryBackend" do
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
end
