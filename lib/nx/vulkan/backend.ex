defmodule Nx.Vulkan.Backend do
  @moduledoc """
  An `Nx.Backend` that keeps tensors in Vulkan device memory.

      Nx.global_default_backend(Nx.Vulkan.Backend)
      Nx.global_default_backend({Nx.Vulkan.Backend, device: 1})

  Options:

    * `:device` - the index of the device (see `Nx.Vulkan.devices/0`). Defaults to the
      engine's choice: `NX_VULKAN_DEVICE`, else discrete > integrated > virtual > CPU.

  Each callback becomes one native call (`Nx.Vulkan.NIF.op/6`) with the op's id in the
  engine's op table, the output's type and shape, the input tensors and the callback's
  options (encoded by `Nx.Vulkan.OpArgs`, decoded by the engine into typed attributes), when
  the engine has the op for those types on that device (the engine decides, nothing is
  hard-coded here). Otherwise the
  callback runs on the host through `Nx.BinaryBackend`; such fallbacks are counted
  (`Nx.Vulkan.fallback_counts/0`), reported through telemetry
  (`[:nx_vulkan, :host_fallback]`) and governed by the `:host_fallback` setting
  (`:allow`, `:warn` - the default, warns once per op - or `:raise`).

  Operations are asynchronous: they return once recorded on the device's stream, and
  reading a tensor (`Nx.to_binary/1`, inspect) waits only for the work it needs.
  """

  @behaviour Nx.Backend
  @enforce_keys [:ref, :device]
  # `constant`: the tensor is a cached constant (constant/3) that other callers share:
  # deallocating it does nothing, and a compiled function given it to donate gets a copy.
  defstruct [:ref, :device, constant: false]

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B
  alias Nx.Vulkan.{Combiner, Error, Fallback, Native, NIF, OpArgs}
  alias Nx.Vulkan.Compiler.{HostSteps, Recorder}

  # The ref of a placeholder of Nx.Vulkan.Compiler.Recorder (a value of a program being recorded).
  defguardp placeholder?(ref) when is_tuple(ref) and elem(ref, 0) == :nxv_value

  @type t :: %__MODULE__{ref: reference(), device: non_neg_integer()}

  ## Options and devices

  @impl true
  def init(opts) do
    opts = Keyword.validate!(opts, [:device])

    case opts[:device] do
      nil ->
        opts

      index when is_integer(index) and index >= 0 ->
        opts

      selector when is_binary(selector) ->
        Keyword.put(opts, :device, Native.device_index_for(selector))

      other ->
        raise ArgumentError,
              "the :device option of Nx.Vulkan.Backend must be a device index, part of a " <>
                "device's name or a prefix of its UUID, got: " <> inspect(other)
    end
  end

  defp device_from_opts(opts) when is_list(opts),
    do: Keyword.get(init(opts), :device) || Native.default_device()

  # The device for an op: that of the first Vulkan input, else the default one.
  defp pick_device(tensors) do
    Enum.find_value(tensors, &device_of/1) || Native.default_device()
  end

  defp device_of(%T{data: %B{device: device}}), do: device
  defp device_of(_), do: nil

  ## Creation

  # A constant is data, not computation: scalars (every number in `Nx.add(t, 1)`) are encoded
  # on the host and uploaded like `from_binary/3`, which is not a host fallback. Larger
  # constants are filled on the device when the engine has "constant".
  #
  # Nx.Defn.Evaluator asks for every constant of a defn on every call, and scalar code lives
  # on such constants: a small one is made once per device and shared (it is immutable:
  # `constant: true`). The key holds the number as a term, so 0.0 and -0.0 stay apart.
  @cached_constant_elements 16
  @cached_constants_max 4096

  @impl true
  def constant(%T{shape: shape} = out, number, backend_options) do
    device = device_from_opts(backend_options)

    # A scalar is uploaded (one op fewer), except into a program: there it is a node that the
    # engine folds into the kernels reading it.
    cond do
      Recorder.active?() or Nx.size(shape) > @cached_constant_elements ->
        with {:ok, tensor} <- native(:constant, device, out, [], value: number_option(number)) do
          tensor
        else
          _ -> upload_constant(out, number, device)
        end

      true ->
        cached_constant(out, number, device)
    end
  end

  defp cached_constant(%T{type: type, shape: shape} = out, number, device) do
    key = {device, type, shape, number}
    table = Nx.Vulkan.Tables.constants()

    case Nx.Vulkan.Tables.with_tables(fn -> :ets.lookup(table, key) end) do
      [{_, data}] ->
        %{out | data: data}

      [] ->
        %T{data: data} =
          if shape == {} do
            upload_constant(out, number, device)
          else
            case native(:constant, device, out, [], value: number_option(number)) do
              {:ok, tensor} -> tensor
              _ -> upload_constant(out, number, device)
            end
          end

        data = %{data | constant: true}
        if :ets.info(table, :size) >= @cached_constants_max, do: :ets.delete_all_objects(table)
        :ets.insert(table, {key, data})
        %{out | data: data}
    end
  end

  defp upload_constant(out, number, device) do
    binary = Nx.BinaryBackend.constant(out, number, []) |> Nx.to_binary()
    from_binary(out, binary, device: device)
  end

  @impl true
  def eye(%T{} = out, backend_options) do
    device = device_from_opts(backend_options)
    create(:eye, device, out, [backend_options])
  end

  @impl true
  def iota(%T{} = out, axis, backend_options) do
    device = device_from_opts(backend_options)
    create(:iota, device, out, [axis, backend_options])
  end

  defp number_option(%Complex{re: re, im: im}), do: [re: re, im: im]
  defp number_option(number), do: number

  @impl true
  def from_binary(%T{type: type, shape: shape} = out, binary, backend_options) do
    device = device_from_opts(backend_options)
    binary = if is_list(binary), do: :erlang.list_to_bitstring(binary), else: binary
    {storage_type, storage_shape} = Native.storage(type, shape)

    ref =
      device
      |> NIF.from_binary(storage_type, storage_shape, pad_to_bytes(binary))
      |> Error.unwrap!()

    %{out | data: %B{ref: ref, device: device}}
  end

  defp pad_to_bytes(binary) when is_binary(binary), do: binary

  defp pad_to_bytes(bitstring) do
    pad = 8 - rem(bit_size(bitstring), 8)
    <<bitstring::bitstring, 0::size(pad)>>
  end

  ## Memory and transfers

  # A placeholder of Nx.Vulkan.Compiler's recording has no data yet.
  @impl true
  def to_binary(%T{data: %B{ref: ref}}, _limit) when placeholder?(ref),
    do: Recorder.stop!("a value is read on the host")

  def to_binary(%T{data: %B{ref: ref}, type: {_, bits} = type}, limit) do
    if Native.engine_type?(type) do
      ref |> NIF.to_binary(limit) |> Error.unwrap!()
    else
      keep = limit * bits
      data = ref |> NIF.to_binary(div(keep + 7, 8)) |> Error.unwrap!()
      <<kept::bitstring-size(^keep), _::bitstring>> = data
      kept
    end
  end

  @impl true
  def backend_copy(%T{data: %B{ref: ref}}, _backend, _opts) when placeholder?(ref),
    do: Recorder.stop!("a value is copied to another backend")

  def backend_copy(%T{data: %B{ref: ref, device: from}} = tensor, backend, opts) do
    if backend == B do
      device = Keyword.get(init(opts), :device) || from
      ref = ref |> NIF.copy(device) |> Error.unwrap!()
      %{tensor | data: %B{ref: ref, device: device}}
    else
      backend.from_binary(tensor, to_binary(tensor, Nx.size(tensor)), opts)
    end
  end

  @impl true
  def backend_transfer(%T{data: %B{ref: ref}}, _backend, _opts) when placeholder?(ref),
    do: Recorder.stop!("a value is moved to another backend")

  def backend_transfer(%T{data: %B{ref: ref, device: from}} = tensor, backend, opts) do
    if backend == B and (Keyword.get(init(opts), :device) || from) == from do
      tensor
    else
      try do
        backend_copy(tensor, backend, opts)
      after
        unless tensor.data.constant, do: NIF.deallocate(ref)
      end
    end
  end

  @impl true
  def backend_deallocate(%T{data: %B{ref: ref}}) when placeholder?(ref), do: :ok
  def backend_deallocate(%T{data: %B{constant: true}}), do: :ok

  def backend_deallocate(%T{data: %B{ref: ref}}) do
    case NIF.deallocate(ref) do
      :ok -> :ok
      :already_deallocated -> :already_deallocated
      {:error, kind, message} -> Error.raise_error!(kind, message)
    end
  end

  @impl true
  def to_batched(out, tensor, opts) do
    leftover = opts[:leftover]
    batch_size = elem(out.shape, 0)
    axis_size = elem(tensor.shape, 0)
    remainder = rem(axis_size, batch_size)
    num_full_batches = div(axis_size, batch_size)

    range =
      if remainder != 0 and leftover == :repeat do
        0..num_full_batches
      else
        0..(num_full_batches - 1)//1
      end

    Stream.map(range, fn
      ^num_full_batches ->
        Nx.concatenate([
          Nx.slice_along_axis(tensor, num_full_batches * batch_size, remainder),
          Nx.slice_along_axis(tensor, 0, batch_size - remainder)
        ])

      i ->
        Nx.slice_along_axis(tensor, i * batch_size, batch_size)
    end)
  end

  @impl true
  def inspect(%T{data: %B{ref: {:nxv_value, value}}}, _inspect_opts),
    do: "Nx.Vulkan.Compiler value #{Kernel.inspect(value)}"

  def inspect(%T{data: %B{ref: ref}} = tensor, inspect_opts) do
    if NIF.deallocated?(ref) do
      message =
        if Map.get(tensor, :donatable?, false),
          do: "Deallocated due to buffer donation",
          else: "Deallocated"

      maybe_add_signature(message, tensor)
    else
      limit = if inspect_opts.limit == :infinity, do: :infinity, else: inspect_opts.limit + 1
      size = Nx.size(tensor)

      tensor
      |> to_binary(if limit == :infinity, do: size, else: min(limit, size))
      |> then(&Nx.Backend.inspect(tensor, &1, inspect_opts))
      |> maybe_add_signature(tensor)
    end
  end

  defp maybe_add_signature(result, %T{data: %B{ref: ref, device: device}}) do
    if add_backend_on_inspect?() do
      ~c"#Ref<" ++ rest = :erlang.ref_to_list(ref)
      info = "Nx.Vulkan.Backend<vulkan:#{device}, " <> List.to_string(rest)
      Inspect.Algebra.concat([info, Inspect.Algebra.line(), result])
    else
      result
    end
  end

  defp add_backend_on_inspect? do
    case Application.fetch_env(:nx_vulkan, :add_backend_on_inspect) do
      {:ok, value} -> value
      :error -> Application.get_env(:nx, :add_backend_on_inspect, true)
    end
  end

  @impl true
  def from_pointer(_pointer, _type, _shape, _backend_opts, _opts) do
    raise ArgumentError, "Nx.Vulkan.Backend does not support Nx.from_pointer/5"
  end

  @impl true
  def to_pointer(_tensor, _opts) do
    raise ArgumentError, "Nx.Vulkan.Backend does not support Nx.to_pointer/2"
  end

  ## Block extension
  #
  # A block with tensor arguments and a single tensor result runs natively when the engine
  # has it, under the struct's name (Nx.Block.CumulativeSum -> "cumulative_sum",
  # Nx.Block.LinAlg.Cholesky -> "linalg_cholesky") with the struct's fields as options.
  # Otherwise its default implementation runs op by op on this backend (not a fallback in
  # itself: each op inside decides).

  @impl true
  def block(%Nx.Block.TopK{k: k} = struct, {values, indices}, [%T{} = tensor] = args, fun) do
    case top_k(values, indices, tensor, k) do
      {:ok, result} -> result
      _ -> apply(fun, [struct | args])
    end
  end

  def block(struct, output, args, fun) do
    with %T{} <- output,
         true <- args != [] and Enum.all?(args, &match?(%T{}, &1)),
         {op, inputs, options} = OpArgs.encode_block(struct, args),
         {:ok, tensor} <- native(op, pick_device(inputs), output, inputs, options) do
      tensor
    else
      _ -> apply(fun, [struct | args])
    end
  end

  # Nx.Block.TopK: the engine's top_k gives the indices (Nx's order: a stable descending
  # argsort's first k), take_along_axis the values.
  defp top_k(values, indices, tensor, k) do
    device = pick_device([tensor])
    axis = tuple_size(tensor.shape) - 1

    with {:ok, indices} <- native(:top_k, device, indices, [tensor], k: k),
         {:ok, values} <- native(:take_along_axis, device, values, [tensor, indices], axis: axis) do
      {:ok, {values, indices}}
    end
  end

  ## Shape

  @impl true
  def as_type(out, tensor), do: dispatch(:as_type, [out, tensor])

  @impl true
  def bitcast(out, tensor), do: dispatch(:bitcast, [out, tensor])

  @impl true
  def reshape(out, tensor), do: dispatch(:reshape, [out, tensor])

  @impl true
  def squeeze(out, tensor, axes),
    do: dispatch(:squeeze, [out, tensor, axes])

  @impl true
  def broadcast(out, tensor, shape, axes),
    do: dispatch(:broadcast, [out, tensor, shape, axes])

  @impl true
  def transpose(out, tensor, axes),
    do: dispatch(:transpose, [out, tensor, axes])

  @impl true
  def pad(out, tensor, pad_value, config) do
    dispatch(:pad, [out, tensor, pad_value, config])
  end

  @impl true
  def reverse(out, tensor, axes),
    do: dispatch(:reverse, [out, tensor, axes])

  ## Linear algebra and indexing

  @impl true
  def dot(out, left, contract_axes1, batch_axes1, right, contract_axes2, batch_axes2) do
    args = [out, left, contract_axes1, batch_axes1, right, contract_axes2, batch_axes2]
    dispatch(:dot, args)
  end

  @impl true
  def clip(out, tensor, min, max),
    do: dispatch(:clip, [out, tensor, min, max])

  # Start indices may be scalar tensors (dynamic slicing): those travel to the engine as inputs
  # (one per such axis, option `dynamic_axes`), which reads and clamps them on the device, so
  # that recording the slice never waits for them. Integer starts are clamped here, as Nx
  # clamps them. The host fallback gets the callback's own arguments.
  @impl true
  def slice(out, tensor, start_indices, lengths, strides) do
    {starts, dynamic_axes, start_tensors} = split_starts(start_indices, tensor.shape, lengths)
    host_args = [out, tensor, start_indices, lengths, strides]

    if dynamic_axes == [] do
      dispatch(:slice, [out, tensor, starts, lengths, strides], host_args)
    else
      options = [start_indices: starts, lengths: lengths, strides: strides]
      dynamic(:slice, out, [tensor | start_tensors], options, dynamic_axes, host_args)
    end
  end

  @impl true
  def put_slice(out, tensor, start_indices, slice) do
    lengths = Tuple.to_list(slice.shape)
    {starts, dynamic_axes, start_tensors} = split_starts(start_indices, tensor.shape, lengths)
    host_args = [out, tensor, start_indices, slice]

    if dynamic_axes == [] do
      dispatch(:put_slice, [out, tensor, starts, slice], host_args)
    else
      options = [start_indices: starts]
      dynamic(:put_slice, out, [tensor, slice | start_tensors], options, dynamic_axes, host_args)
    end
  end

  # Integer starts clamped into range (0 stands for a tensor start), the axes with tensor
  # starts, and those tensors.
  defp split_starts(start_indices, shape, lengths) do
    {starts, axes, tensors} = OpArgs.dynamic_starts(start_indices)

    starts =
      Enum.zip_with([Tuple.to_list(shape), starts, lengths], fn [dim, index, length] ->
        min(max(index, 0), dim - length)
      end)

    {starts, axes, tensors}
  end

  defp dynamic(callback, out, inputs, options, dynamic_axes, host_args) do
    device = pick_device(inputs)

    case native(callback, device, out, inputs, options ++ [dynamic_axes: dynamic_axes]) do
      {:ok, tensor} -> tensor
      {:host, reason} -> host(callback, device, host_args, reason)
    end
  end

  @impl true
  def gather(out, input, indices, opts),
    do: dispatch(:gather, [out, input, indices, opts])

  @impl true
  def concatenate(out, tensors, axis),
    do: dispatch(:concatenate, [out, tensors, axis])

  @impl true
  def stack(out, tensors, axis), do: dispatch(:stack, [out, tensors, axis])

  @impl true
  def select(out, pred, on_true, on_false) do
    dispatch(:select, [out, pred, on_true, on_false])
  end

  @impl true
  def conv(out, tensor, kernel, opts),
    do: dispatch(:conv, [out, tensor, kernel, opts])

  # Nx.BinaryBackend raises on a zero on the diagonal; the kernel would divide by it. One
  # reduction on the device and a scalar read say whether to raise, before the solve.
  @impl true
  def triangular_solve(out, a, b, opts) do
    n = elem(a.shape, tuple_size(a.shape) - 1)

    zero_on_diagonal =
      a
      |> Nx.equal(0)
      |> Nx.logical_and(Nx.eye(n, type: :u8, backend: {__MODULE__, device: pick_device([a, b])}))
      |> Nx.any()
      |> Nx.to_number()

    if zero_on_diagonal == 1, do: raise(ArgumentError, "can't solve for singular matrix")
    dispatch(:triangular_solve, [out, a, b, opts])
  end

  @impl true
  def fft(out, tensor, opts), do: dispatch(:fft, [out, tensor, opts])

  @impl true
  def ifft(out, tensor, opts), do: dispatch(:ifft, [out, tensor, opts])

  ## Reductions

  for op <- [:all, :any, :sum, :product, :reduce_max, :reduce_min, :argmax, :argmin] do
    @impl true
    def unquote(op)(out, tensor, opts) do
      dispatch(unquote(op), [out, tensor, opts])
    end
  end

  for op <- [:sort, :argsort] do
    @impl true
    def unquote(op)(out, tensor, opts) do
      dispatch(unquote(op), [out, tensor, opts])
    end
  end

  # Reductions with an Elixir function: the function traced on scalars (Nx.Vulkan.Combiner)
  # becomes the kernel's combiner, over the tensor and the accumulator in the output type
  # (as Nx.Defn traces them). Functions of ops without scalar expressions run on the host.
  @impl true
  def reduce(out, tensor, acc, opts, fun) do
    options = [axes: opts[:axes], keep_axes: opts[:keep_axes]]
    args = [out, tensor, acc, opts, fun]
    with_combiner(:reduce, out, [tensor, acc], options, fun, args)
  end

  @impl true
  def window_reduce(out, tensor, acc, shape, opts, fun) do
    options = [window_dimensions: shape] ++ opts
    args = [out, tensor, acc, shape, opts, fun]
    with_combiner(:window_reduce, out, [tensor, acc], options, fun, args)
  end

  defp with_combiner(op, out, inputs, options, fun, host_args) do
    device = pick_device(inputs)

    with {:ok, combiner} <- Combiner.trace(fun, out.type),
         inputs = Enum.map(inputs, &in_type(&1, out.type)),
         {:ok, tensor} <- native(op, device, out, inputs, [combiner: combiner] ++ options) do
      tensor
    else
      {tag, reason} when tag in [:host, :error] -> host(op, device, host_args, reason)
    end
  end

  defp in_type(%T{type: type} = tensor, type), do: tensor
  defp in_type(tensor, type), do: Nx.as_type(tensor, type)

  for op <- [:window_sum, :window_product, :window_max, :window_min] do
    @impl true
    def unquote(op)(out, tensor, window_dimensions, opts) do
      dispatch(unquote(op), [out, tensor, window_dimensions, opts])
    end
  end

  for op <- [:window_scatter_max, :window_scatter_min] do
    @impl true
    def unquote(op)(out, tensor, source, init_value, window_dimensions, opts) do
      args = [out, tensor, source, init_value, window_dimensions, opts]
      dispatch(unquote(op), args)
    end
  end

  for op <- [:indexed_add, :indexed_put] do
    @impl true
    def unquote(op)(out, tensor, indices, updates, opts) do
      args = [out, tensor, indices, updates, opts]
      dispatch(unquote(op), args)
    end
  end

  ## Element-wise

  binary_ops =
    [:add, :subtract, :multiply, :pow, :remainder, :divide, :atan2, :min, :max, :quotient] ++
      [:bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift] ++
      [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
      [:logical_and, :logical_or, :logical_xor]

  for op <- binary_ops do
    @impl true
    def unquote(op)(out, left, right) do
      dispatch(unquote(op), [out, left, right])
    end
  end

  unary_ops =
    Enum.map(Nx.Shared.unary_math_funs(), &elem(&1, 0)) ++
      [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
      [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]

  for op <- unary_ops do
    @impl true
    def unquote(op)(out, tensor) do
      dispatch(unquote(op), [out, tensor])
    end
  end

  ## Dispatch

  # Runs the callback natively when the engine takes it, else calls the same callback of
  # Nx.BinaryBackend with `host_args` (the callback's own arguments).
  defp dispatch(callback, [out | args], host_args \\ nil) do
    {op, inputs, options} = OpArgs.encode(callback, args)
    device = pick_device(inputs)

    case native(op, device, out, inputs, options) do
      {:ok, tensor} -> tensor
      {:host, reason} -> host(callback, device, host_args || [out | args], reason)
    end
  end

  # One native call, unless the engine has refused the same kind of call before (answers are
  # cached by what they depend on: Native.support_key/6). The engine checks every call itself.
  # While Nx.Vulkan.Compiler records, the call becomes a node of its program instead.
  defp native(op, device, out, inputs, options) do
    if Recorder.active?(),
      do: Recorder.node(op, device, out, inputs, options),
      else: run_native(op, device, out, inputs, options)
  end

  defp run_native(op, device, out, inputs, options) do
    with {:ok, {id, depends}} <- Native.native_entry(op, out.type, inputs),
         answer when answer in [nil, true] <-
           cached_answer(id, device, op, out, inputs, options, depends) do
      refs = Enum.map(inputs, &to_ref(&1, device))

      case NIF.op(device, id, out.type, out.shape, refs, options) do
        {:ok, ref} ->
          {:ok, %{out | data: %B{ref: ref, device: device}}}

        # The engine declines (unsupported) or disagrees with Nx about the request
        # (invalid_argument): Nx.BinaryBackend, which Nx validated it for, runs it.
        {:error, kind, message} when kind in [:unsupported, :invalid_argument] ->
          Native.refuse(
            id,
            Native.support_key(device, op, out, inputs, options, depends),
            message
          )

          {:host, message}

        {:error, kind, message} ->
          Error.raise_error!(kind, message)
      end
    end
  end

  # Only ops refused before can have an answer cached that sends the call to the host.
  defp cached_answer(id, device, op, out, inputs, options, depends) do
    if Native.refused_before?(id),
      do: Native.cached(Native.support_key(device, op, out, inputs, options, depends))
  end

  # Creation callbacks (no tensor arguments).
  defp create(callback, device, out, args) do
    {op, [], options} = OpArgs.encode(callback, args)

    case native(op, device, out, [], options) do
      {:ok, tensor} ->
        tensor

      {:host, reason} ->
        host(callback, device, [out | args], reason)
    end
  end

  # The host fallback: inputs copied to Nx.BinaryBackend (never moved: the caller still owns
  # them), the same callback run there, the result uploaded to `device`. While
  # Nx.Vulkan.Compiler records, the call becomes a host step of its program, which runs this
  # on each call.
  @doc false
  def host(op, device, args, reason) do
    if Recorder.active?(),
      do: HostSteps.host_op(op, device, args, reason),
      else: run_host(op, device, args, reason)
  end

  defp run_host(op, device, args, reason) do
    Fallback.record!(op, reason)
    host_args = Enum.map(args, &to_host_arg/1)

    fn -> apply(Nx.BinaryBackend, op, host_args) end
    |> with_host_backend()
    |> to_device(device)
  end

  # Tensors created inside the BinaryBackend callback must stay on the host too.
  defp with_host_backend(fun) do
    previous = Nx.default_backend(Nx.BinaryBackend)

    try do
      fun.()
    after
      Nx.default_backend(previous)
    end
  end

  defp to_host_arg(%T{data: %B{}} = tensor) do
    Nx.BinaryBackend.from_binary(tensor, to_binary(tensor, Nx.size(tensor)), [])
  end

  defp to_host_arg(list) when is_list(list), do: Enum.map(list, &to_host_arg/1)
  defp to_host_arg(other), do: other

  defp to_device(%T{data: %B{device: device}} = tensor, device), do: tensor

  defp to_device(%T{data: %B{ref: ref}} = tensor, device) do
    %{tensor | data: %B{ref: Error.unwrap!(NIF.copy(ref, device)), device: device}}
  end

  defp to_device(%T{} = tensor, device) do
    from_binary(tensor, Nx.to_binary(tensor), device: device)
  end

  defp to_device(tuple, device) when is_tuple(tuple) do
    tuple |> Tuple.to_list() |> Enum.map(&to_device(&1, device)) |> List.to_tuple()
  end

  defp to_device(list, device) when is_list(list), do: Enum.map(list, &to_device(&1, device))

  # An input on its way into a native op: already there, on another device, or elsewhere.
  # Also the compiler's, for its inputs and captures.
  @doc false
  def to_ref(%T{data: %B{ref: ref, device: device}}, device), do: ref
  def to_ref(%T{data: %B{ref: ref}}, device), do: Error.unwrap!(NIF.copy(ref, device))

  def to_ref(%T{type: type, shape: shape} = tensor, device) do
    {storage_type, storage_shape} = Native.storage(type, shape)
    binary = tensor |> Nx.to_binary() |> pad_to_bytes()
    device |> NIF.from_binary(storage_type, storage_shape, binary) |> Error.unwrap!()
  end
end
