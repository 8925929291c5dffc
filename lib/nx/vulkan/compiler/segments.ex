defmodule Nx.Vulkan.Compiler.Segments do
  @moduledoc false
  # Cuts a recording with host steps into the order a call runs it: device segments (each an
  # engine program of the nodes recorded between two steps) and the host steps between them.
  #
  # Values keep the recorder's raw names (`{:param, i}`, `{:capture, j}`, `{:node, k}`,
  # `{:host, s, j}`). A segment reads the values it needs from earlier segments, steps,
  # params and captures as program inputs, and returns only the values that a later segment,
  # a later step or the function's result reads; nodes nothing reads are dropped.

  @doc """
  The call's order: `{:segment, program, input_values, output_values}` (`program` as the
  engine's program_compile takes it) and `{:host, s, action, input_values, input_templates, output_specs}`.
  """
  def split(nodes, steps, outputs, spec_of) do
    nodes = List.to_tuple(nodes)

    bounds =
      steps
      |> Enum.with_index()
      |> Enum.map(fn {{at, action, values, templates, specs}, s} ->
        {at, {:host, s, action, values, templates, specs}}
      end)

    {items, last} =
      Enum.map_reduce(bounds, 0, fn {at, step}, from -> {[{from, at}, step], at} end)

    items = List.flatten(items) ++ [{last, tuple_size(nodes)}]

    {items, _needed} =
      items
      |> Enum.reverse()
      |> Enum.map_reduce(MapSet.new(outputs), fn
        {:host, _, _, values, _, _} = step, needed ->
          {step, Enum.into(values, needed)}

        {from, to}, needed ->
          segment(nodes, from, to, needed, spec_of)
      end)

    items |> Enum.reverse() |> Enum.reject(&is_nil/1)
  end

  defp segment(nodes, from, to, needed, spec_of) do
    outputs = for k <- from..(to - 1)//1, MapSet.member?(needed, {:node, k}), do: {:node, k}

    # Nodes the outputs depend on, walking back from the last.
    live =
      Enum.reduce((to - 1)..from//-1, MapSet.new(outputs), fn k, live ->
        if MapSet.member?(live, {:node, k}) do
          {_, _, _, values, _} = elem(nodes, k)
          Enum.into(values, live)
        else
          live
        end
      end)

    kept = for k <- from..(to - 1)//1, MapSet.member?(live, {:node, k}), do: k
    own = MapSet.new(kept, &{:node, &1})

    inputs =
      kept
      |> Enum.flat_map(fn k -> elem(elem(nodes, k), 3) end)
      |> Enum.reject(&MapSet.member?(own, &1))
      |> Enum.uniq()

    n_in = length(inputs)

    number =
      Map.merge(
        inputs |> Enum.with_index() |> Map.new(),
        kept |> Enum.with_index(n_in) |> Map.new(fn {k, i} -> {{:node, k}, i} end)
      )

    program = %{
      input_specs: Enum.map(inputs, spec_of),
      nodes:
        Enum.map(kept, fn k ->
          {id, type, shape, values, options} = elem(nodes, k)
          {id, type, shape, Enum.map(values, &Map.fetch!(number, &1)), options}
        end),
      outputs: Enum.map(outputs, &Map.fetch!(number, &1)),
      donations: []
    }

    needed = Enum.into(inputs, needed)
    if outputs == [], do: {nil, needed}, else: {{:segment, program, inputs, outputs}, needed}
  end
end
