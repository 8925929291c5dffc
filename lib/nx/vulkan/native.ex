defmodule Nx.Vulkan.Native do
  @moduledoc false
  # What the engine can run natively, how Nx types are stored on the device, and the
  # default device. The answers come from the engine (its op table and nxv::check_op);
  # nothing about op coverage is hard-coded here.

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

  @doc """
  The index of the device `selector` names, as NX_VULKAN_DEVICE does: a prefix of its UUID (8
  hex digits or more, dashes and case ignored), else part of its name. Remembered per selector.
  """
  def device_index_for(selector) when is_binary(selector) do
    key = {__MODULE__, :selector, selector}

    case :persistent_term.get(key, nil) do
      nil ->
        index = resolve_selector(selector, Error.unwrap!(NIF.devices()))
        :persistent_term.put(key, index)
        index

      index ->
        index
    end
  end

  defp resolve_selector(selector, devices) do
    hex = selector |> String.downcase() |> String.replace("-", "")
    by_uuid = byte_size(hex) >= 8 and hex =~ ~r/^[0-9a-f]+$/
    matches = if by_uuid, do: Enum.filter(devices, &String.starts_with?(&1.uuid, hex)), else: []
    name = String.downcase(selector)

    case matches do
      [device] ->
        device.index

      [_ | _] ->
        raise ArgumentError,
              "UUID prefix #{inspect(selector)} matches several devices; give more of it"

      [] ->
        case Enum.find(devices, &String.contains?(String.downcase(&1.name), name)) do
          nil ->
            names = Enum.map_join(devices, ", ", &"#{&1.index}: #{&1.name} (#{&1.uuid})")

            raise ArgumentError,
                  "no Vulkan device matches #{inspect(selector)}; devices: #{names}"

          device ->
            device.index
        end
    end
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

  @doc """
  The engine's op table (`nxv/op_table.inc`): `%{op => {id, depends}}`, where `depends`
  lists what a support answer depends on besides device, op and types (`:ranks`, `:shapes`,
  `:layouts`, `:options`).
  """
  def op_table do
    case :persistent_term.get({__MODULE__, :op_table}, nil) do
      nil ->
        table =
          NIF.op_table()
          |> Error.unwrap!()
          |> Map.new(fn {name, id, _family, _arity, depends} -> {name, {id, depends}} end)

        :persistent_term.put({__MODULE__, :op_table}, table)
        table

      table ->
        table
    end
  end

  @doc "The ops of the engine's elementwise family (what a traced function may use)."
  def elementwise_ops do
    case :persistent_term.get({__MODULE__, :elementwise_ops}, nil) do
      nil ->
        ops =
          NIF.op_table()
          |> Error.unwrap!()
          |> Enum.filter(fn {_name, _id, family, _arity, _depends} -> family == :elementwise end)
          |> MapSet.new(fn {name, _, _, _, _} -> name end)

        :persistent_term.put({__MODULE__, :elementwise_ops}, ops)
        ops

      ops ->
        ops
    end
  end

  @doc "The names of the ops the engine implements natively (for some types)."
  def native_ops, do: op_table() |> Map.keys() |> Enum.map(&Atom.to_string/1) |> MapSet.new()

  @doc "The op's `{id, depends}` in the engine's table, or nil when it has no native kernel."
  def op_entry(op), do: Map.get(op_table(), op)

  @doc """
  Whether `op` producing `out` from `inputs` (tensors, any backend) with `options` runs
  natively on `device`: `true` or `{:host, reason}`. Answers are cached by what the engine
  says they depend on (`op_table/0`).
  """
  def check(device, op, %{type: out_type, shape: out_shape} = out, inputs, options \\ []) do
    with {:ok, {id, depends}} <- native_entry(op, out_type, inputs),
         key = support_key(device, op, out, inputs, options, depends),
         nil <- cached(key) do
      in_specs = Enum.map(inputs, &{&1.type, &1.shape})

      answer =
        case NIF.check_op(device, id, out_type, out_shape, in_specs, options) do
          {:ok, true} -> true
          {:ok, {_kind, reason}} -> {:host, reason}
          {:error, :invalid_argument, reason} -> {:host, reason}
          {:error, kind, message} -> Error.raise_error!(kind, message)
        end

      Tables.with_tables(fn -> :ets.insert(Tables.support(), {key, answer}) end)
      if answer != true, do: mark_refused(id)
      answer
    else
      {:host, _} = no -> no
      answer -> answer
    end
  end

  @doc "The op's table entry when every type is one the engine stores, else `{:host, reason}`."
  def native_entry(op, out_type, inputs) do
    cond do
      not (engine_type?(out_type) and Enum.all?(inputs, &engine_type?(&1.type))) ->
        {:host, "a sub-byte type is kept as raw bytes on the device"}

      entry = op_entry(op) ->
        {:ok, entry}

      true ->
        {:host, "the engine has no native #{op} yet"}
    end
  end

  @doc "The cache key of a support answer: exactly what the engine says the answer depends on."
  def support_key(device, op, %{type: out_type, shape: out_shape}, inputs, options, depends) do
    {device, op, out_type, Enum.map(inputs, & &1.type),
     if(:ranks in depends, do: {tuple_size(out_shape), Enum.map(inputs, &tuple_size(&1.shape))}),
     if(:shapes in depends, do: {out_shape, Enum.map(inputs, & &1.shape)}),
     if(:options in depends, do: options)}
  end

  @doc "A cached answer for `key`, or nil."
  def cached(key) do
    case Tables.with_tables(fn -> :ets.lookup(Tables.support(), key) end) do
      [{_, answer}] -> answer
      [] -> nil
    end
  end

  @doc """
  Records that the engine refused a call of op `id` with `key` (so the next one goes to the
  host).
  """
  def refuse(id, key, reason) do
    Tables.with_tables(fn -> :ets.insert(Tables.support(), {key, {:host, reason}}) end)
    mark_refused(id)
  end

  @doc """
  Whether a call of op `id` was ever refused (a `{:host, _}` answer is cached for it). An op
  never refused needs no support key and no table lookup before its call: the engine checks
  every call itself.
  """
  def refused_before?(id), do: :atomics.get(refusals(), id + 1) != 0

  defp mark_refused(id), do: :atomics.put(refusals(), id + 1, 1)

  # One flag per row of the op table. Created once (starting the application first where a
  # script never did: the first op goes through here); a second process racing to create it
  # may lose flags set meanwhile, which only costs a refusal found again.
  defp refusals do
    case :persistent_term.get({__MODULE__, :refusals}, nil) do
      nil ->
        Tables.with_tables(fn -> :ets.lookup(Tables.support(), :none) end)
        flags = :atomics.new(map_size(op_table()) + 1, signed: false)
        :persistent_term.put({__MODULE__, :refusals}, flags)
        flags

      flags ->
        flags
    end
  end
end
