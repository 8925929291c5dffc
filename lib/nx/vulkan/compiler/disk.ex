defmodule Nx.Vulkan.Compiler.Disk do
  @moduledoc false
  # `cache: path` (as EXLA's): the recorded program (its nodes, input specs, outputs, donations
  # and the result's template) and the tensors it captured, in a file, so that a new VM
  # compiles it without tracing the function (the engine's kernels and pipelines persist in
  # their own caches). The file names the keys it was made for (argument templates, device,
  # options); a file of other keys is a miss, with a warning saying which differ.

  require Logger

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend, as: B

  @magic "NXVK"
  @version 1

  @doc "The recording stored at `path` for `keys`, with its captures uploaded to `device`; or `:miss`."
  def read(path, keys, device) do
    case File.read(path) do
      {:ok, <<@magic, @version, blob::binary>>} ->
        case :erlang.binary_to_term(blob) do
          {^keys, stored} ->
            {:ok, restore(stored, device)}

          {disk_keys, _} ->
            differ = for {k, v} <- disk_keys, keys[k] != v, do: k

            Logger.warning(
              "Nx.Vulkan.Compiler's disk cache at #{inspect(path)} was made for another " <>
                "#{Enum.join(differ, ", ")}: tracing again and replacing it"
            )

            :miss
        end

      {:ok, _} ->
        Logger.warning(
          "Discarding Nx.Vulkan.Compiler's disk cache at #{inspect(path)}: another format"
        )

        :miss

      {:error, _} ->
        :miss
    end
  end

  @doc "Stores `recorded` (its captures downloaded) at `path` for `keys`."
  def write(path, keys, recorded) do
    capture_specs = Enum.take(recorded.input_specs, -length(recorded.captures))

    captures =
      Enum.zip_with(recorded.captures, capture_specs, fn ref, {type, shape} ->
        {type, shape, Nx.to_binary(tensor(type, shape, %B{ref: ref, device: keys.device}))}
      end)

    stored = %{recorded | captures: captures}
    File.mkdir_p!(Path.dirname(path))
    File.write!(path, <<@magic, @version, :erlang.term_to_binary({keys, stored})::binary>>)
  end

  defp restore(stored, device) do
    captures =
      Enum.map(stored.captures, fn {type, shape, binary} ->
        t = B.from_binary(tensor(type, shape, nil), binary, device: device)
        B.to_ref(t, device)
      end)

    %{stored | captures: captures}
  end

  defp tensor(type, shape, data) do
    %T{
      data: data,
      type: type,
      shape: shape,
      names: List.duplicate(nil, tuple_size(shape)),
      vectorized_axes: []
    }
  end
end
