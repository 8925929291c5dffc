defmodule Nx.Vulkan.OpArgs do
  @moduledoc false
  # The one encoding of an Nx.Backend callback's arguments as an engine op:
  # `{op, inputs, options}`, tensors as `inputs` in argument order and every other argument
  # as a named option. The backend (Nx.Vulkan.Backend), the fixture generator
  # (mix nx_vulkan.fixtures, in tools/fixtures) and the Nx.Defn compiler all use it, so that the engine, the
  # conformance fixtures and the NIF see the same options under the same names.

  @kw_last [:gather, :conv, :all, :any, :sum, :product, :reduce_max, :reduce_min] ++
             [:argmax, :argmin, :sort, :argsort, :indexed_add, :indexed_put] ++
             [:triangular_solve, :fft, :ifft]

  @doc """
  How each callback's arguments (after `out`) map to inputs and options: a list with `:t`
  (a tensor input), `:tl` (a list of tensor inputs), `:kw` (a keyword list merged into the
  options), `:ignore`, or an option name; `:kw_last` (tensors, then a keyword list);
  `:all_tensors`; `:skip` (not an op: functions, pointers, batching).
  """
  def arg_spec(:squeeze), do: [:t, :axes]
  def arg_spec(:transpose), do: [:t, :axes]
  def arg_spec(:reverse), do: [:t, :axes]
  def arg_spec(:broadcast), do: [:t, :shape, :axes]
  def arg_spec(:pad), do: [:t, :t, :padding_config]
  def arg_spec(:dot), do: [:t, :left_contract, :left_batch, :t, :right_contract, :right_batch]
  def arg_spec(:slice), do: [:t, :start_indices, :lengths, :strides]
  def arg_spec(:put_slice), do: [:t, :start_indices, :t]
  def arg_spec(:concatenate), do: [:tl, :axis]
  def arg_spec(:stack), do: [:tl, :axis]
  def arg_spec(:window_scatter_max), do: [:t, :t, :t, :window_dimensions, :kw]
  def arg_spec(:window_scatter_min), do: [:t, :t, :t, :window_dimensions, :kw]
  def arg_spec(:iota), do: [:axis, :ignore]
  def arg_spec(:eye), do: [:ignore]
  def arg_spec(:constant), do: [:value, :ignore]

  def arg_spec(name)
      when name in [
             :from_binary,
             :reduce,
             :window_reduce,
             :to_batched,
             :from_pointer,
             :to_pointer
           ],
      do: :skip

  def arg_spec(name) when name in [:window_sum, :window_product, :window_max, :window_min],
    do: [:t, :window_dimensions, :kw]

  def arg_spec(name) when name in @kw_last, do: :kw_last
  def arg_spec(_), do: :all_tensors

  @doc "`{op, inputs, options}` for `callback` called with `args` (its arguments after `out`)."
  def encode(callback, args) do
    case arg_spec(callback) do
      :skip ->
        :skip

      :all_tensors ->
        {callback, args, []}

      :kw_last ->
        {tensors, [kw]} = Enum.split(args, -1)
        {callback, tensors, kw}

      spec ->
        {inputs, options} =
          spec
          |> Enum.zip(args)
          |> Enum.reduce({[], []}, fn
            {:t, t}, {ins, opts} -> {[t | ins], opts}
            {:tl, ts}, {ins, opts} -> {Enum.reverse(ts) ++ ins, opts}
            {:kw, kw}, {ins, opts} -> {ins, Enum.reverse(kw) ++ opts}
            {:ignore, _}, acc -> acc
            {key, v}, {ins, opts} -> {ins, [{key, v} | opts]}
          end)

        {callback, Enum.reverse(inputs), Enum.reverse(options)}
    end
  end

  @doc """
  Slice start indices split for the engine: `{starts, dynamic_axes, tensors}`, the integers as
  given with 0 where a start is a tensor, the axes whose start is a tensor, and those tensors
  (inputs after the op's data inputs).
  """
  def dynamic_starts(start_indices) do
    dynamic = for {%Nx.Tensor{} = t, axis} <- Enum.with_index(start_indices), do: {axis, t}
    starts = Enum.map(start_indices, fn i -> if is_integer(i), do: i, else: 0 end)
    {starts, Enum.map(dynamic, &elem(&1, 0)), Enum.map(dynamic, &elem(&1, 1))}
  end

  @doc """
  An `Nx.block/4` extension as an op: named after its struct (Nx.Block.CumulativeSum ->
  `:cumulative_sum`, Nx.Block.LinAlg.Cholesky -> `:linalg_cholesky`), its tensor arguments as
  inputs and the struct's fields as options.
  """
  def encode_block(%module{} = struct, args) do
    name =
      module
      |> Module.split()
      |> Enum.drop(2)
      |> Enum.map_join("_", fn
        "LinAlg" -> "linalg"
        part -> Macro.underscore(part)
      end)

    {String.to_atom(name), args, struct |> Map.from_struct() |> Enum.sort()}
  end
end
