defmodule Nx.Vulkan.TransfersTest do
  # Binaries in and out (byte-exact for every type) and transfers between backends and
  # devices, deallocation.
  use Nx.Vulkan.Case, async: true

  import Bitwise
  import Nx.Vulkan.Test.OpsHelpers
  alias Nx.Vulkan.Test.Compare

  @engine_types [u: 8, u: 16, u: 32, u: 64, s: 8, s: 16, s: 32, s: 64] ++
                  [f: 16, bf: 16, f: 32, f: 64, c: 64, c: 128, f: 8, f8_e4m3fn: 8]

  setup do
    :rand.seed(:exsss, {1, 2, 3})
    :ok
  end

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
end
