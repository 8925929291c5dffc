defmodule Nx.Vulkan.FallbackTest do
  # Host fallbacks (Nx.Vulkan.Fallback): counted, reported through telemetry, governed by the
  # :host_fallback setting; inputs copied to the host, results back on the device.
  use Nx.Vulkan.Case, async: true

  import ExUnit.CaptureLog
  import Nx.Vulkan.Test.OpsHelpers
  alias Nx.Vulkan.Test.Compare

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
end
