defmodule Nx.Vulkan.ConstantsTest do
  # Small constants (Nx.Vulkan.Backend.constant/3, which Nx.Defn.Evaluator calls for every
  # constant of a defn on every call) are made once per device and shared: nothing a caller
  # does to one changes what the next caller gets.
  use Nx.Vulkan.Case, async: true

  alias Nx.Vulkan.Backend

  defp constant(type, shape, number) do
    out = %Nx.Tensor{
      type: type,
      shape: shape,
      names: List.duplicate(nil, tuple_size(shape)),
      data: nil
    }

    Backend.constant(out, number, [])
  end

  defp bits(t), do: Nx.to_binary(t)

  test "the same small constant is the same tensor; each keeps Nx's bits" do
    for {type, number} <- [{{:f, 32}, 2.5}, {{:s, 64}, -7}, {{:f, 64}, :nan}, {{:bf, 16}, 1.0e-3}] do
      a = constant(type, {}, number)
      b = constant(type, {}, number)
      assert a.data.ref == b.data.ref
      assert a.data.constant
      assert bits(a) == bits(Nx.BinaryBackend.constant(%{a | data: nil}, number, []))
    end

    # -0.0 is not 0.0; a shape or type of its own is a constant of its own.
    assert <<0, 0, 0, 128>> == bits(constant({:f, 32}, {}, -0.0))
    assert <<0, 0, 0, 0>> == bits(constant({:f, 32}, {}, 0.0))
    refute constant({:f, 32}, {}, 1.0).data.ref == constant({:f, 64}, {}, 1.0).data.ref
    v = constant({:s, 32}, {4}, 3)
    assert v.data.ref == constant({:s, 32}, {4}, 3).data.ref
    assert Nx.to_flat_list(v) == [3, 3, 3, 3]
    # Larger ones are made each time.
    refute constant({:f, 32}, {17}, 1.0).data.ref == constant({:f, 32}, {17}, 1.0).data.ref
  end

  test "deallocating or transferring a shared constant leaves it to the next caller" do
    c = constant({:f, 32}, {2}, 4.0)
    assert Nx.backend_deallocate(c) == :ok
    assert Nx.backend_transfer(c, Nx.BinaryBackend) |> Nx.to_flat_list() == [4.0, 4.0]
    again = constant({:f, 32}, {2}, 4.0)
    assert again.data.ref == c.data.ref
    assert Nx.to_flat_list(again) == [4.0, 4.0]
  end

  test "a compiled function given a shared constant to donate writes over a copy" do
    step = Nx.Defn.jit(fn w -> Nx.add(w, 1.0) end, compiler: Nx.Vulkan.Compiler)
    c = constant({:f, 32}, {3}, 5.0)
    assert step.(Nx.donatable(c)) |> Nx.to_flat_list() == [6.0, 6.0, 6.0]
    assert Nx.to_flat_list(c) == [5.0, 5.0, 5.0]
    assert Nx.to_flat_list(constant({:f, 32}, {3}, 5.0)) == [5.0, 5.0, 5.0]
  end
end
