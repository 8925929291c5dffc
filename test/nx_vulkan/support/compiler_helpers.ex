defmodule Nx.Vulkan.Test.CompilerHelpers do
  @moduledoc false
  # What the compiler's tests share: random inputs, bits, telemetry of compilations as
  # messages, and compiled results against the same function run by Nx.Defn.Evaluator on
  # Nx.Vulkan.Backend (the same kernels: the same bits).

  import ExUnit.Assertions
  alias Nx.Vulkan.Compiler

  def random(shape, type \\ :f32) do
    key = Nx.Random.key(:rand.uniform(1_000_000))
    {t, _} = Nx.Random.normal(key, shape: shape, type: type)
    t
  end

  def bits(t), do: Nx.to_binary(t)

  # The function compiled and run op by op must give the same bits (same kernels).
  def assert_same(fun, args, opts \\ []) do
    attach_compilations()
    compiled = apply(Nx.Defn.jit(fun, [compiler: Compiler] ++ opts), args)
    assert_received {:compiled, _, %{mode: :program}}
    assert_eager_bits(compiled, fun, args)
  end

  # `compiled`'s leaves are device tensors with the bits of `fun` run by the Evaluator.
  def assert_eager_bits(compiled, fun, args) do
    eager = apply(Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator), args)

    [compiled, eager]
    |> Enum.map(&Nx.Defn.Composite.flatten_list([&1]))
    |> Enum.zip()
    |> Enum.each(fn {c, e} ->
      assert c.type == e.type and c.shape == e.shape
      assert %Nx.Vulkan.Backend{} = c.data
      assert bits(c) == bits(e)
    end)

    compiled
  end

  # Telemetry of compilations in this process, as messages.
  def attach_compilations do
    parent = self()
    id = {__MODULE__, make_ref()}

    :telemetry.attach(
      id,
      [:nx_vulkan, :compilation],
      fn _event, measurements, meta, _ ->
        if self() == parent, do: send(parent, {:compiled, measurements, meta})
      end,
      nil
    )

    ExUnit.Callbacks.on_exit(fn -> :telemetry.detach(id) end)
  end

  # Compiled (as `mode`; `:steps` with host steps, `:loop_kernel` as steps of the engine's loop
  # kernel only) against the Evaluator on our backend, bit for bit.
  def assert_compiled(mode, fun, args, opts \\ []) do
    attach_compilations()
    # cache: false compiles (and reports) even where an earlier test compiled the same function.
    compiled = apply(Nx.Defn.jit(fun, [compiler: Compiler, cache: false] ++ opts), args)

    case mode do
      :loop_kernel ->
        assert_received {:compiled, _, %{mode: :steps, host_steps: 0, loop_kernels: kernels}}
        assert kernels > 0

      :steps ->
        assert_received {:compiled, _, %{mode: :steps} = meta}
        assert meta.host_steps > 0

      mode ->
        assert_received {:compiled, _, %{mode: ^mode}}
    end

    assert_eager_bits(compiled, fun, args)
  end
end
