defmodule Nx.Vulkan.ErrorsTest do
  # The backend's API: every Nx.Backend callback present, device options and their errors,
  # devices and memory statistics.
  use Nx.Vulkan.Case, async: true

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
      assert byte_size(first.uuid) == 32
    end

    test "the :device option takes a UUID prefix or part of a name" do
      [first | _] = Nx.Vulkan.devices()
      dashed = String.slice(first.uuid, 0, 8) <> "-" <> String.slice(first.uuid, 8, 4)

      for selector <- [String.upcase(dashed), String.slice(first.name, 0, 4)] do
        t = Nx.tensor([1.0, 2.0], backend: {Nx.Vulkan.Backend, device: selector})
        assert t.data.device == first.index
        assert Nx.to_flat_list(t) == [1.0, 2.0]
      end

      assert_raise ArgumentError, ~r/no Vulkan device matches "no such gpu"/, fn ->
        Nx.tensor([1.0], backend: {Nx.Vulkan.Backend, device: "no such gpu"})
      end
    end
  end
end
