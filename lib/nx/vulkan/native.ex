defmodule Nx.Vulkan.Native do
  @moduledoc false
  # What the engine can run natively, how Nx types are stored on the device, and the
  # default device. The answers come from the engine (nxv::native_op_names and
  # nxv::supports_op); nothing about op coverage is hard-coded here.

  alias Nx.Vulkan.{Error, NIF, Tables}

  @engine_types [
    {:u, 8},
    {:u, 16},
    {:u, 32},
    {:u, 64},
    {:s, 8},
    {:s, 16},
    {:s, 32},
    {:s, 64},
    {:f, 16},
    {:bf, 16},
    {:f, 32},
    {:f, 64},
    {:c, 64},
    {:c, 128},
    {:f, 8},
    {:f8_e4m3fn, 8}
  ]

  @doc "Whether the engine stores this Nx type as itself (else as raw bytes)."
  def engine_type?(type), do: type in @engine_types

  @doc """
  How a tensor of `type` and `shape` lives on the device: `{engine_type, engine_shape}`.
  Types the engine does not know (sub-byte integers) are kept as raw bytes,
  `{:u, 8}` of shape `{byte_size}`; every op on them runs through the host fallback.
  """
  def storage(type, shape) when type in @engine_types, do: {type, shape}

  def storage({_, bits}, shape) do
    {{:u, 8}, {div(Nx.size(shape) * bits + 7, 8)}}
  end

  @doc "The index of the default device (NX_VULKAN_DEVICE aware), opened on first use."
  def default_device do
    case :persistent_term.get({__MODULE__, :default_device}, nil) do
      nil ->
        index = Error.unwrap!(NIF.default_device())
        :persistent_term.put({__MODULE__, :default_device}, index)
        index

      index ->
        index
    end
  end

  @doc "The names of the ops the engine implements natively (for some types)."
  def native_ops do
    case :persistent_term.get({__MODULE__, :native_ops}, nil) do
      nil ->
        ops = NIF.native_ops() |> Error.unwrap!() |> MapSet.new()
        :persistent_term.put({__MODULE__, :native_ops}, ops)
        ops

      ops ->
        ops
    end
  end

  @doc """
  Whether `op` producing `out` from `inputs` (tensors, any backend) runs natively on
  `device`. Cached per device, op, output type and rank, and input types.
  """
  def supported?(device, op, %{type: out_type, shape: out_shape}, inputs) do
    name = if is_atom(op), do: Atom.to_string(op), else: op
    in_types = Enum.map(inputs, & &1.type)

    engine_type?(out_type) and Enum.all?(in_types, &engine_type?/1) and
      MapSet.member?(native_ops(), name) and
      cached_support(device, name, out_type, out_shape, in_types)
  end

  defp cached_support(device, name, out_type, out_shape, in_types) do
    key = {device, name, out_type, tuple_size(out_shape), in_types}

    case :ets.lookup(Tables.support(), key) do
      [{_, answer}] ->
        answer

      [] ->
        answer =
          device
          |> NIF.supports_op(name, out_type, out_shape, in_types)
          |> Error.unwrap!()

        :ets.insert(Tables.support(), {key, answer})
        answer
    end
  end
end
